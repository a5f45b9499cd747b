global _start
section .data
msg: db "line 0", 10
ts: dq 1, 0
section .text
_start:
    mov r12, 0
.next:
    mov rax, 1
    mov rdi, 1
    lea rsi, [rel msg]
    mov rdx, 7
    syscall
    mov rax, 35
    lea rdi, [rel ts]
    xor rsi, rsi
    syscall
    inc byte [rel msg + 5]
    inc r12
    cmp r12, 3
    jl .next
    mov rax, 60
    xor rdi, rdi
    syscall
