/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The XDP program's object (CTL_XDP_OBJ, built from xdp/cuckoo_xdp.bpf.c)
 * inside cuckooctl, between ctl_xdp_obj and ctl_xdp_obj_end: cuckooctl xdp
 * attach loads it from memory, so no installed file is needed.
 */
	.section .rodata
	.balign 8
	.globl	ctl_xdp_obj
ctl_xdp_obj:
	.incbin	CTL_XDP_OBJ
	.globl	ctl_xdp_obj_end
ctl_xdp_obj_end:
	.section .note.GNU-stack, "", %progbits
