#include "textflag.h"

// func ticks() uint64
TEXT ·ticks(SB), NOSPLIT, $0-8
	ISB $15
	MRS CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func spinUntil(deadline uint64)
TEXT ·spinUntil(SB), NOSPLIT, $0-8
	MOVD deadline+0(FP), R1
loop:
	ISB $15
	MRS CNTVCT_EL0, R0
	CMP R1, R0
	BLO loop
	RET
