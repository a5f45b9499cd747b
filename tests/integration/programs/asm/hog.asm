global _start
section .text
_start:
    mov rax, 9
    xor rdi, rdi
    mov rsi, 1048576
    mov rdx, 3
    mov r10, 0x22
    mov r8, -1
    xor r9, r9
    syscall
    mov rcx, 0
.touch:
    mov byte [rax + rcx], 1
    add rcx, 4096
    cmp rcx, 1048576
    jl .touch
    jmp _start
