// ChunkedSlab: objects addressed by a 32-bit index, stored in fixed-size
// chunks of 2^kChunkBits that never move. Growth allocates one chunk at a time
// -- no copy of what exists, no latency spike, no over-allocation beyond a
// chunk -- and an index is half the size of a pointer. Indices are handed out
// in order and never taken back: the owner keeps its own free list (through a
// field of T) to reuse them.
//
// Thread-safety: not thread-safe.
#ifndef CHIME_SRC_WHEEL_CHUNKED_SLAB_H_
#define CHIME_SRC_WHEEL_CHUNKED_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace chime::wheel {

template <typename T, int kChunkBits>
class ChunkedSlab {
 public:
  T& operator[](uint32_t i) { return chunks_[i >> kChunkBits][i & kMask]; }
  const T& operator[](uint32_t i) const {
    return chunks_[i >> kChunkBits][i & kMask];
  }

  // The next index; its object is default-initialized (left for the caller to
  // set). REQUIRES: size() < UINT32_MAX.
  uint32_t Grow() {
    if ((size_ & kMask) == 0) {
      chunks_.push_back(
          std::make_unique_for_overwrite<T[]>(size_t{1} << kChunkBits));
    }
    return size_++;
  }

  // Indices handed out so far: 0 .. size() - 1.
  uint32_t size() const { return size_; }

  size_t MemoryBytes() const {
    return chunks_.capacity() * sizeof(chunks_[0]) +
           chunks_.size() * (size_t{1} << kChunkBits) * sizeof(T);
  }

 private:
  static constexpr uint32_t kMask = (uint32_t{1} << kChunkBits) - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  uint32_t size_ = 0;
};

}  // namespace chime::wheel

#endif  // CHIME_SRC_WHEEL_CHUNKED_SLAB_H_
