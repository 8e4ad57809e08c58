#include "engine/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>

#include "base/units.h"

namespace ferry {
namespace {


TEST(BufferPoolTest, LargeBuffersComeBackAndAreReused) {
  BufferPool pool(64 * kMiB);
  char* first;
  {
    auto a = BufferPool::Take(&pool, 16 * kMiB);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_GE(a.capacity(), 16 * kMiB);
    std::memset(a.data(), 7, 16 * kMiB);  // the whole buffer is usable
    first = a.data();
    EXPECT_EQ(pool.kept_bytes(), 0u);
  }
  EXPECT_EQ(pool.kept_bytes(), 16 * kMiB);
  auto b = BufferPool::Take(&pool, 16 * kMiB - 100);  // a last, shorter part
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(pool.reused(), 1u);
  EXPECT_EQ(pool.kept_bytes(), 0u);
}

TEST(BufferPoolTest, SmallBuffersAndNoPoolArePlainAllocations) {
  BufferPool pool(64 * kMiB);
  { auto a = BufferPool::Take(&pool, 4096); EXPECT_EQ(a.capacity(), 4096u); }
  EXPECT_EQ(pool.kept_bytes(), 0u);
  { auto a = BufferPool::Take(nullptr, 8 * kMiB); EXPECT_EQ(a.capacity(), 8 * kMiB); }
  auto z = BufferPool::Take(&pool, 0);
  EXPECT_GE(z.capacity(), 1u);
  EXPECT_NE(z.data(), nullptr);
}

TEST(BufferPoolTest, AFreeBufferMuchLargerThanAskedIsNotHandedOut) {
  BufferPool pool(64 * kMiB);
  { auto a = BufferPool::Take(&pool, 16 * kMiB); }
  auto b = BufferPool::Take(&pool, 12 * kMiB);  // 16 is a third more than 12
  EXPECT_EQ(b.capacity(), 12 * kMiB);
  EXPECT_EQ(pool.reused(), 0u);
  EXPECT_EQ(pool.kept_bytes(), 16 * kMiB);  // still there for the next part
  auto c = BufferPool::Take(&pool, 13 * kMiB);  // 16 is within a quarter of 13
  EXPECT_EQ(c.capacity(), 16 * kMiB);
  EXPECT_EQ(pool.reused(), 1u);
}

TEST(BufferPoolTest, LeasedAndKeptStayWithinTheLimit) {
  BufferPool pool(20 * kMiB);
  {
    auto a = BufferPool::Take(&pool, 8 * kMiB);
    auto b = BufferPool::Take(&pool, 8 * kMiB);
    auto c = BufferPool::Take(&pool, 8 * kMiB);  // a budget may let 24 out
    EXPECT_EQ(pool.leased_bytes(), 24 * kMiB);
    // Back in the order c, b, a: c would make 24 with the others out.
  }
  EXPECT_EQ(pool.leased_bytes(), 0u);
  EXPECT_EQ(pool.kept_bytes(), 16 * kMiB);
  auto x = BufferPool::Take(&pool, 8 * kMiB);
  auto y = BufferPool::Take(&pool, 8 * kMiB);
  EXPECT_EQ(pool.reused(), 2u);
  EXPECT_EQ(pool.kept_bytes(), 0u);
  EXPECT_EQ(pool.leased_bytes(), 16 * kMiB);
}

TEST(BufferPoolTest, ALargerBufferDisplacesSmallerOnesOnlyWhenThatMakesRoom) {
  BufferPool pool(16 * kMiB);
  {
    auto s1 = BufferPool::Take(&pool, 4 * kMiB);
    auto s2 = BufferPool::Take(&pool, 4 * kMiB);
  }
  EXPECT_EQ(pool.kept_bytes(), 8 * kMiB);
  auto big = BufferPool::Take(&pool, 16 * kMiB);
  big = BufferPool::Lease();  // the two 4 MiB buffers make room for it
  EXPECT_EQ(pool.kept_bytes(), 16 * kMiB);
  auto again = BufferPool::Take(&pool, 16 * kMiB);
  EXPECT_EQ(pool.reused(), 1u);

  // Free {12, 4} in a 16 MiB pool: an 8 MiB buffer handed back would need
  // 8 MiB of smaller ones dropped and there are only 4: it is the one freed.
  BufferPool tight(16 * kMiB);
  {
    auto m12 = BufferPool::Take(&tight, 12 * kMiB);
    auto m4 = BufferPool::Take(&tight, 4 * kMiB);
  }
  EXPECT_EQ(tight.kept_bytes(), 16 * kMiB);
  auto m8 = BufferPool::Take(&tight, 8 * kMiB);  // neither free one suits it
  EXPECT_EQ(tight.reused(), 0u);
  m8 = BufferPool::Lease();
  EXPECT_EQ(tight.kept_bytes(), 16 * kMiB);
  auto r12 = BufferPool::Take(&tight, 12 * kMiB);
  auto r4 = BufferPool::Take(&tight, 4 * kMiB);
  EXPECT_EQ(tight.reused(), 2u);
}

TEST(BufferPoolTest, ABufferLargerThanTheLimitIsNeverKeptNorEmptiesThePool) {
  BufferPool pool(8 * kMiB);
  { auto a = BufferPool::Take(&pool, 4 * kMiB); }
  EXPECT_EQ(pool.kept_bytes(), 4 * kMiB);
  { auto huge = BufferPool::Take(&pool, 32 * kMiB); }
  EXPECT_EQ(pool.kept_bytes(), 4 * kMiB);
  EXPECT_EQ(pool.leased_bytes(), 0u);
}

TEST(BufferPoolTest, MovedLeaseReturnsOnce) {
  BufferPool pool(64 * kMiB);
  {
    auto a = BufferPool::Take(&pool, 1 * kMiB);
    BufferPool::Lease b(std::move(a));
    EXPECT_EQ(a.data(), nullptr);
    BufferPool::Lease c;
    c = std::move(b);
    EXPECT_NE(c.data(), nullptr);
  }
  EXPECT_EQ(pool.kept_bytes(), 1 * kMiB);
}

}  // namespace
}  // namespace ferry
