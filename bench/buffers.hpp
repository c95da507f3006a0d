// RAII owners for device, pinned-host, managed and pageable host memory, CUDA events and
// streams. Allocation failures become cs::gpu::CudaError naming the call (std::bad_alloc for
// pageable memory); destructors never throw.
#pragma once

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cs::gpu {

// pageable: host memory the CUDA driver does not know, left uninitialised, in 2 MiB-aligned
// blocks that the kernel is asked to back with transparent huge pages (madvise; a no-op where
// it offers none). A row's first touch of a hundred-megabyte buffer then takes a few hundred
// page faults instead of tens of thousands; every row still owns its buffers.
enum class MemKind { device, pinned, managed, pageable };

inline constexpr std::size_t kHugePage = std::size_t(2) << 20;

class Buffer {
public:
    Buffer() = default;
    Buffer(MemKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
        if (bytes == 0) return;
        switch (kind) {
            case MemKind::device: CS_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); break;
            case MemKind::pinned: CS_CUDA_CHECK(cudaMallocHost(&ptr_, bytes)); break;
            case MemKind::managed: CS_CUDA_CHECK(cudaMallocManaged(&ptr_, bytes, cudaMemAttachGlobal)); break;
            case MemKind::pageable: {
                const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
                ptr_ = std::aligned_alloc(kHugePage, rounded);
                if (!ptr_) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
                (void)madvise(ptr_, rounded, MADV_HUGEPAGE);  // advice only: small pages if refused
#endif
                break;
            }
        }
    }
    ~Buffer() { release(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { *this = std::move(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        if (this != &o) {
            release();
            kind_ = o.kind_;
            bytes_ = std::exchange(o.bytes_, 0);
            ptr_ = std::exchange(o.ptr_, nullptr);
        }
        return *this;
    }

    void* get() const { return ptr_; }
    template <typename T>
    T* as() const { return static_cast<T*>(ptr_); }
    std::size_t bytes() const { return bytes_; }
    MemKind kind() const { return kind_; }

private:
    void release() noexcept {
        if (!ptr_) return;
        if (kind_ == MemKind::pinned)
            (void)cudaFreeHost(ptr_);
        else if (kind_ == MemKind::pageable)
            std::free(ptr_);
        else
            (void)cudaFree(ptr_);
        ptr_ = nullptr;
        bytes_ = 0;
    }
    MemKind kind_ = MemKind::device;
    std::size_t bytes_ = 0;
    void* ptr_ = nullptr;
};

class Event {
public:
    Event() { CS_CUDA_CHECK(cudaEventCreate(&ev_)); }
    ~Event() {
        if (ev_) (void)cudaEventDestroy(ev_);
    }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    Event(Event&& o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}
    cudaEvent_t get() const { return ev_; }
    void record(cudaStream_t s) { CS_CUDA_CHECK(cudaEventRecord(ev_, s)); }

private:
    cudaEvent_t ev_ = nullptr;
};

// Milliseconds between two recorded events (both must have completed).
inline float elapsed_ms(const Event& a, const Event& b) {
    float ms = 0;
    CS_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    return ms;
}

class Stream {
public:
    Stream() { CS_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    ~Stream() {
        if (s_) (void)cudaStreamDestroy(s_);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    cudaStream_t get() const { return s_; }
    void sync() const { CS_CUDA_CHECK(cudaStreamSynchronize(s_)); }

private:
    cudaStream_t s_ = nullptr;
};

}  // namespace cs::gpu
