// glibc's malloc gives blocks of 128 KB and more back to the kernel when they
// are freed (mmap'd blocks, and the heap's top above its trim threshold), so a
// training step that frees and reallocates megabytes of activations faults
// every page of them in again, zeroed, each step: 376k page faults in 600
// steps of the `mlp` bench, a third of its time. PyTorch's tuning guide answers
// with jemalloc or tcmalloc; firebrand asks glibc to keep blocks up to 32 MB
// in its heaps and to return only free space beyond 64 MB at a heap's top.
#pragma once

namespace firebrand {

// Applies the settings above once per process, unless the process chose its
// own (GLIBC_TUNABLES glibc.malloc.mmap_threshold / trim_threshold, or
// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_). Does nothing outside glibc.
void keepFreedMemoryForReuse();

// Gives the free pages of glibc's heaps back to the kernel (malloc_trim), for after a one-off change
// that freed much for good: int8 quantization frees the model's float weights, which the heaps would
// otherwise keep. Does nothing outside glibc.
void releaseFreedMemory();

}  // namespace firebrand
