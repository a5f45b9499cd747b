; hello, stdin's line, then the args, then twice(21) from util.asm; "oops" on stderr; exit 3
global _start
extern twice
section .bss
buf: resb 256
section .data
hello: db "hello", 10
oops: db "oops", 10
space: db " "
nl: db 10
section .text
write:                  ; rsi = text, rdx = length, rdi = fd
    mov rax, 1
    syscall
    ret
_start:
    mov rdi, 1
    lea rsi, [rel hello]
    mov rdx, 6
    call write
    mov rax, 0          ; read(0, buf, 256)
    mov rdi, 0
    lea rsi, [rel buf]
    mov rdx, 256
    syscall
    mov rdx, rax
    dec rdx             ; without its newline
    mov rdi, 1
    lea rsi, [rel buf]
    call write
    mov r12, [rsp]      ; argc
    mov r13, 1
.args:
    cmp r13, r12
    jge .done
    mov rdi, 1
    lea rsi, [rel space]
    mov rdx, 1
    call write
    mov rsi, [rsp + 8 + r13 * 8]
    mov rdx, 0
.len:
    cmp byte [rsi + rdx], 0
    je .put
    inc rdx
    jmp .len
.put:
    mov rdi, 1
    call write
    inc r13
    jmp .args
.done:
    mov rdi, 1
    lea rsi, [rel nl]
    mov rdx, 1
    call write
    mov rdi, 21
    call twice          ; rax = 42: two digits
    mov rcx, 10
    xor rdx, rdx
    div rcx
    add al, '0'
    add dl, '0'
    mov [rel buf], al
    mov [rel buf + 1], dl
    mov byte [rel buf + 2], 10
    mov rdi, 1
    lea rsi, [rel buf]
    mov rdx, 3
    call write
    mov rdi, 2
    lea rsi, [rel oops]
    mov rdx, 5
    call write
    mov rax, 60
    mov rdi, 3
    syscall
