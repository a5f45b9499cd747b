global _start
section .text
_start:
    mov rax, [0]
