global _start
section .text
_start:
    mov rax, undefined_name
