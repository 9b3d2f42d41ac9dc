
build/default/bench/bench:     file format elf64-x86-64


Disassembly of section .text:

0000000000087d80 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)>:
   87d80:	test   %rsi,%rsi
   87d83:	je     87f80 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x200>
   87d89:	push   %r12
   87d8b:	push   %rbp
   87d8c:	push   %rbx
   87d8d:	cmpq   $0x0,0x6d8(%rdi)
   87d95:	mov    %rdi,%rbx
   87d98:	jne    87f88 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x208>
   87d9e:	mov    %rsi,%rax
   87da1:	shr    $0x30,%rax
   87da5:	je     87dd0 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x50>
   87da7:	xor    %ecx,%ecx
   87da9:	mov    $0xffffffff,%ebp
   87dae:	xor    %r9d,%r9d
   87db1:	mov    $0x1,%edx
   87db6:	sub    $0x8,%rsp
   87dba:	mov    %ebp,%r8d
   87dbd:	mov    %rbx,%rdi
   87dc0:	push   $0x0
   87dc2:	call   52ae0 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate_rejected(void*, cudapool::core::lookup_result::kind, unsigned int, unsigned int, bool, cudapool::stream_ref const*)>
   87dc7:	pop    %rax
   87dc8:	pop    %rdx
   87dc9:	pop    %rbx
   87dca:	pop    %rbp
   87dcb:	pop    %r12
   87dcd:	ret
   87dce:	xchg   %ax,%ax
   87dd0:	mov    0x580(%rdi),%rax
   87dd7:	mov    %rsi,%rdx
   87dda:	shr    $0x20,%rdx
   87dde:	mov    (%rax,%rdx,8),%rax
   87de2:	test   %rax,%rax
   87de5:	je     87da7 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x27>
   87de7:	mov    %rsi,%rdx
   87dea:	shr    $0x10,%rdx
   87dee:	movzwl %dx,%edx
   87df1:	mov    (%rax,%rdx,8),%rdi
   87df5:	test   %rdi,%rdi
   87df8:	je     87da7 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x27>
   87dfa:	mov    (%rdi),%rax
   87dfd:	lea    -0x1(%rax),%rdx
   87e01:	cmp    %rsi,%rdx
   87e04:	jae    87da7 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x27>
   87e06:	mov    0xc(%rdi),%r9d
   87e0a:	mov    0x1c(%rdi),%edx
   87e0d:	mov    %rsi,%rcx
   87e10:	sub    %rax,%rcx
   87e13:	imul   %r9,%rdx
   87e17:	mov    %r9,%r8
   87e1a:	cmp    %rdx,%rcx
   87e1d:	jae    87da7 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x27>
   87e1f:	mov    %esi,%r10d
   87e22:	mov    0x28(%rdi),%r11
   87e26:	sub    %eax,%r10d
   87e29:	mov    %r10d,%eax
   87e2c:	mulq   0x10(%rdi)
   87e30:	test   %r11,%r11
   87e33:	je     87fa8 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x228>
   87e39:	mov    %rdx,%rax
   87e3c:	shl    $0x4,%rax
   87e40:	add    %rax,%r11
   87e43:	mov    %r8d,%eax
   87e46:	mov    0x18(%rdi),%ebp
   87e49:	mov    0x8(%rdi),%ecx
   87e4c:	mov    $0x1,%r9d
   87e52:	imul   %edx,%eax
   87e55:	add    %edx,%ebp
   87e57:	xor    %edx,%edx
   87e59:	cmp    %eax,%r10d
   87e5c:	jne    87db6 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x36>
   87e62:	movzbl 0x368(%rbx),%r8d
   87e6a:	mov    0xc(%r11),%eax
   87e6e:	lea    0xc(%r11),%rdi
   87e72:	mov    %eax,%edx
   87e74:	shr    $0x1e,%edx
   87e77:	cmp    $0x1,%edx
   87e7a:	jne    87f98 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x218>
   87e80:	test   %r8b,%r8b
   87e83:	je     87fd0 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x250>
   87e89:	xor    %edx,%edx
   87e8b:	lock cmpxchg %edx,(%rdi)
   87e8f:	jne    87f98 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x218>
   87e95:	mov    0x5b0(%rbx),%rsi
   87e9c:	mov    %ecx,%r12d
   87e9f:	and    $0x3fffffff,%eax
   87ea4:	lea    0x80(%r12),%rdi
   87eac:	mov    %rsi,%rdx
   87eaf:	and    $0x7,%edx
   87eb2:	shl    $0x4,%rdx
   87eb6:	add    %fs:0x0,%rdx
   87ebf:	mov    -0x2bb8(%rdx),%rcx
   87ec6:	cmp    -0x2bc0(%rdx),%rsi
   87ecd:	jne    87fdb <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)+0x25b>
   87ed3:	lea    (%rcx,%rdi,8),%rsi
   87ed7:	mov    (%rsi),%rdx
   87eda:	add    $0x1,%rdx
   87ede:	mov    %rdx,(%rsi)
   87ee1:	mov    0x800(%rcx),%rdx
   87ee8:	sub    %rax,%rdx
   87eeb:	mov    %rdx,0x800(%rcx)
   87ef2:	shl    $0x6,%r12
   87ef6:	xor    %eax,%eax
   87ef8:	mov    $0x1,%edx
   87efd:	rex.WR
   87efe:	.byte 0x3
   87eff:	.byte 0xa3
