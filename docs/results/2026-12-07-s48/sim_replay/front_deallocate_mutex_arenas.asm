
build/default/bench/bench:     file format elf64-x86-64


Disassembly of section .text:

00000000000b0540 <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)>:
   b0540:	mov    0x278(%rdi),%rcx
   b0547:	mov    %rdi,%rax
   b054a:	test   %rcx,%rcx
   b054d:	je     b055f <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)+0x1f>
   b054f:	mov    0x120(%rdi),%rcx
   b0556:	mov    %rsi,%rdi
   b0559:	shr    $0x30,%rdi
   b055d:	je     b0570 <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)+0x30>
   b055f:	mov    0x988(%rax),%rdi
   b0566:	jmp    87ad0 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*, cudapool::stream_ref)>
   b056b:	nopl   0x0(%rax,%rax,1)
   b0570:	mov    0x40(%rcx),%rcx
   b0574:	mov    %rsi,%rdi
   b0577:	shr    $0x20,%rdi
   b057b:	mov    (%rcx,%rdi,8),%rcx
   b057f:	test   %rcx,%rcx
   b0582:	je     b055f <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)+0x1f>
   b0584:	mov    %rsi,%rdi
   b0587:	shr    $0x10,%rdi
   b058b:	movzwl %di,%edi
   b058e:	mov    (%rcx,%rdi,8),%rcx
   b0592:	cmp    $0x1,%ecx
   b0595:	jbe    b055f <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)+0x1f>
   b0597:	sub    $0x2,%ecx
   b059a:	lea    (%rcx,%rcx,2),%rcx
   b059e:	shl    $0x3,%rcx
   b05a2:	mov    0x388(%rax,%rcx,1),%rdi
   b05aa:	lea    0x398(%rax,%rcx,1),%rax
   b05b2:	mov    0x30(%rdi),%rdi
   b05b6:	cmp    %rdi,%rdx
   b05b9:	mov    (%rax),%rdi
   b05bc:	jne    b0566 <cudapool::pool_model<cudapool::stream_arenas<cudapool::basic_pool<cudapool::mutex_free_lists, true> > >::deallocate(void*, cudapool::stream_ref)+0x26>
   b05be:	jmp    87d80 <cudapool::basic_pool<cudapool::mutex_free_lists, true>::deallocate(void*)>
