global twice
section .text
twice:
    lea rax, [rdi + rdi]
    ret
