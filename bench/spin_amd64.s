#include "textflag.h"

// func ticks() uint64
TEXT ·ticks(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func spinUntil(deadline uint64)
TEXT ·spinUntil(SB), NOSPLIT, $0-8
	MOVQ deadline+0(FP), CX
loop:
	RDTSC
	SHLQ $32, DX
	ORQ DX, AX
	CMPQ AX, CX
	JCC done
	PAUSE
	JMP loop
done:
	RET
