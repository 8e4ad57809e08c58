// The shared multipart uploader against the local directory store, with a
// decorator that injects part failures and counts calls: parts uploaded and
// completed, failures retried or the upload aborted, resume skipping the
// parts a journal reports, the end-to-end MD5, the budget; and its pure
// policy (part spans, what a failure leaves) as tables.

#include "ops/multipart_upload.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "crypto/digest.h"
#include "ops/range_part_reader.h"
#include "store/forwarding_store.h"
#include "store/local/local_store.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

// A store that forwards to another and fails chosen UploadPart calls.
class FaultyStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  // The next `times` UploadPart calls of part `number` fail with `s`.
  void FailPart(int number, int times, Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_[number] = {times, std::move(s)};
  }
  int part_calls(int number) {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_[number];
  }
  int all_part_calls() {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& [part, c] : calls_) n += c;
    return n;
  }

  Result<PartInfo> UploadPart(std::string_view k, std::string_view id, int number, ByteSource& body,
                              uint64_t size, const PartOptions& md5) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[number];
      auto f = faults_.find(number);
      if (f != faults_.end() && f->second.times > 0) {
        --f->second.times;
        return f->second.status;
      }
    }
    return inner().UploadPart(k, id, number, body, size, md5);
  }

 private:
  struct Fault {
    int times = 0;
    Status status;
  };
  std::mutex mu_;
  std::map<int, Fault> faults_;
  std::map<int, int> calls_;
};

// A source that hides that its bytes are in memory (no Contiguous()).
class StreamOnly : public ByteSource {
 public:
  explicit StreamOnly(std::string_view d) : inner_(d) {}
  Result<size_t> Read(char* buf, size_t cap) override { return inner_.Read(buf, cap); }
  Status Rewind() override { return inner_.Rewind(); }

 private:
  ViewSource inner_;
};

// Parts of a string, with injected read failures; counts parts in flight.
class StringPartReader : public PartReader {
 public:
  explicit StringPartReader(std::string data, bool contiguous = true)
      : data_(std::move(data)), contiguous_(contiguous) {}
  void FailRead(int number, int times, Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_[number] = {times, std::move(s)};
  }
  int reads() const { return reads_.load(); }
  int max_in_flight() const { return max_in_flight_.load(); }

  Status Read(const PartSpan& part, const PartSend& send) override {
    ++reads_;
    if (Status s = Injected(part.number); !s.ok()) return s;
    int now = ++in_flight_;
    for (int seen = max_in_flight_.load(); now > seen;) {
      if (max_in_flight_.compare_exchange_weak(seen, now)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let others start
    std::string_view bytes = std::string_view(data_).substr(part.offset, part.size);
    std::string md5 = Base64Encode(Md5(bytes));
    Status s;
    if (contiguous_) {
      ViewSource body(bytes);
      s = send(body, md5);
    } else {
      StreamOnly body(bytes);
      s = send(body, md5);
    }
    --in_flight_;
    return s;
  }

 private:
  Status Injected(int number) {
    std::lock_guard<std::mutex> lock(mu_);
    auto f = faults_.find(number);
    if (f == faults_.end() || f->second.first == 0) return Status::Ok();
    --f->second.first;
    return f->second.second;
  }

  const std::string data_;
  const bool contiguous_;
  std::mutex mu_;
  std::map<int, std::pair<int, Status>> faults_;
  std::atomic<int> reads_{0}, in_flight_{0}, max_in_flight_{0};
};

// A resumable journal in memory, as migrate's state store would keep it.
class MemoryJournal : public UploadJournal {
 public:
  Result<std::optional<UploadInProgress>> Begin() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (id.empty()) return std::optional<UploadInProgress>();
    UploadInProgress u{id, {}};
    for (const auto& [n, p] : parts) u.parts.push_back(p);
    return std::optional<UploadInProgress>(u);
  }
  Status Created(std::string_view upload_id) override {
    id = std::string(upload_id);
    return created_answer;
  }
  Status PartDone(const PartInfo& p) override {
    std::lock_guard<std::mutex> lock(mu_);
    parts[p.number] = p;
    return Status::Ok();
  }
  Status MayComplete() override { return permit; }
  Status Abandon(ObjectStore& dst, std::string_view key, std::string_view upload_id) override {
    ++abandoned;
    id.clear();
    parts.clear();
    return dst.AbortMultipart(key, upload_id);
  }
  bool Resumable() const override { return true; }

  std::string id;
  std::map<int, PartInfo> parts;
  Status created_answer;
  Status permit;
  int abandoned = 0;

 private:
  std::mutex mu_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 13) % 26);
  return s;
}

class MultipartUploadTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kPart = 1000;
  static constexpr uint64_t kSize = 9 * kPart + 123;  // 10 parts, the last short

  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ferry-mpu-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    LocalStoreOptions lo;
    lo.create_if_missing = true;
    lo.sync = false;
    auto opened = OpenLocalStore(dir_ + "/root", lo);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    local_ = std::move(*opened);
    store_ = std::make_unique<FaultyStore>(*local_);
    plan_.multipart = true;
    plan_.part_size = kPart;
    plan_.parts = 10;
    options_.concurrency = 4;
    options_.retry.base = std::chrono::milliseconds(1);
    options_.retry.cap = std::chrono::milliseconds(2);
  }
  void TearDown() override {
    store_.reset();
    local_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  MultipartOutcome Upload(PartReader& reader, UploadJournal& journal) {
    PutOptions put;
    put.headers.content_type = "application/x-test";
    return UploadMultipart(*store_, "obj", kSize, plan_, put, reader, journal, options_);
  }
  std::string Stored() {
    StringSink sink;
    auto got = local_->Get("obj", GetOptions{}, sink);
    return got.ok() ? sink.data() : "<" + got.status().ToString() + ">";
  }
  size_t OpenUploads() {
    auto open = local_->ListMultipartUploads("obj");
    EXPECT_TRUE(open.ok()) << open.status().ToString();
    return open.ok() ? open->size() : 0;
  }

  std::string dir_;
  std::unique_ptr<ObjectStore> local_;
  std::unique_ptr<FaultyStore> store_;
  PartPlan plan_;
  MultipartOptions options_;
  const std::string data_ = Pattern(kSize);
};

TEST(PartSpan, Table) {
  PartPlan plan{true, 100, 3};
  struct Case {
    uint64_t size;
    int number;
    uint64_t offset, length;
  } cases[] = {
      {250, 1, 0, 100},   {250, 2, 100, 100}, {250, 3, 200, 50},
      {300, 3, 200, 100}, {201, 3, 200, 1},   {200, 3, 200, 0},
  };
  for (const Case& c : cases) {
    PartSpan s = SpanOf(plan, c.size, c.number);
    EXPECT_EQ(s.number, c.number);
    EXPECT_EQ(s.offset, c.offset) << c.size << " part " << c.number;
    EXPECT_EQ(s.size, c.length) << c.size << " part " << c.number;
  }
}

TEST(AfterFailure, Table) {
  using S = UploadStep;
  const auto kKeep = AfterFailure::kKeep, kAbandon = AfterFailure::kAbandon;
  const Status busy(ErrorCode::kServerError, "503");
  const Status denied(ErrorCode::kAccessDenied, "403");
  const Status gone(ErrorCode::kNotFound, "NoSuchUpload");
  const Status bad(ErrorCode::kCorruption, "md5");
  const Status cancelled(ErrorCode::kCancelled, "stop");
  struct Case {
    bool resumable;
    UploadStep step;
    Status status;
    AfterFailure want;
  } cases[] = {
      {false, S::kSend, busy, kAbandon},      {false, S::kPermit, busy, kAbandon},
      {false, S::kRead, cancelled, kAbandon}, {true, S::kSend, busy, kKeep},
      {true, S::kSend, denied, kAbandon},     {true, S::kRead, busy, kKeep},
      {true, S::kRead, gone, kAbandon},       {true, S::kSend, gone, kAbandon},
      {true, S::kComplete, gone, kAbandon},   {true, S::kJournal, gone, kAbandon},
      {true, S::kVerify, bad, kAbandon},      {true, S::kRead, bad, kKeep},
      {true, S::kPermit, cancelled, kKeep},   {true, S::kPermit, denied, kKeep},
      {true, S::kComplete, cancelled, kKeep}, {true, S::kJournal, busy, kKeep},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecideAfterFailure(c.resumable, c.step, c.status), c.want)
        << c.resumable << " " << ToString(c.step) << " " << c.status.ToString();
  }
}

TEST_F(MultipartUploadTest, UploadsEveryPartAndCompletes) {
  StringPartReader reader(data_);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(out.parts_sent, 10);
  EXPECT_EQ(store_->all_part_calls(), 10);
  EXPECT_EQ(out.object.etag.substr(out.object.etag.size() - 3), "-10");
  EXPECT_EQ(Stored(), data_);
  auto head = local_->Head("obj");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->headers.content_type, "application/x-test");
  EXPECT_EQ(OpenUploads(), 0u);
}

TEST_F(MultipartUploadTest, ARetryableSendFailureIsSentAgain) {
  store_->FailPart(3, 2, Status(ErrorCode::kServerError, "injected 500"));
  StringPartReader reader(data_);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(store_->part_calls(3), 3);
  EXPECT_EQ(reader.reads(), 10) << "a send is retried from the bytes read";
  EXPECT_EQ(Stored(), data_);
}

TEST_F(MultipartUploadTest, ARetryableReadFailureIsReadAgain) {
  StringPartReader reader(data_);
  reader.FailRead(5, 1, Status::Corruption("short range"));
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(reader.reads(), 11);
  EXPECT_EQ(store_->part_calls(5), 1);
  EXPECT_EQ(Stored(), data_);
}

TEST_F(MultipartUploadTest, APermanentFailureAbortsTheUpload) {
  store_->FailPart(2, 1, Status::AccessDenied("injected 403"));
  StringPartReader reader(data_);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  EXPECT_EQ(out.status.code(), ErrorCode::kAccessDenied);
  EXPECT_EQ(out.step, UploadStep::kSend);
  EXPECT_EQ(store_->part_calls(2), 1) << "a permanent error is not retried";
  EXPECT_EQ(OpenUploads(), 0u);
  EXPECT_FALSE(local_->Head("obj").ok());
}

TEST_F(MultipartUploadTest, RetriesExhaustedAbortAOneShotUpload) {
  store_->FailPart(7, 100, Status(ErrorCode::kThrottled, "injected 503"));
  StringPartReader reader(data_);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  EXPECT_EQ(out.status.code(), ErrorCode::kThrottled);
  EXPECT_EQ(store_->part_calls(7), options_.retry.max_attempts);
  EXPECT_EQ(OpenUploads(), 0u);
}

TEST_F(MultipartUploadTest, AResumableUploadIsKeptAndResumedWithoutItsFinishedParts) {
  options_.retry.max_attempts = 1;
  options_.concurrency = 1;  // parts in order: 1..3 land before 4 fails
  store_->FailPart(4, 1, Status(ErrorCode::kServerError, "injected 500"));
  StringPartReader reader(data_);
  MemoryJournal journal;
  MultipartOutcome first = Upload(reader, journal);
  EXPECT_EQ(first.status.code(), ErrorCode::kServerError);
  EXPECT_EQ(first.step, UploadStep::kSend);
  EXPECT_EQ(journal.abandoned, 0);
  EXPECT_EQ(OpenUploads(), 1u) << "kept for the next run";
  ASSERT_EQ(journal.parts.size(), 3u);
  const std::string id = journal.id;

  options_.concurrency = 4;
  MultipartOutcome second = Upload(reader, journal);
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  EXPECT_EQ(journal.id, id) << "the same upload, continued";
  EXPECT_EQ(second.parts_sent, 7);
  for (int n = 1; n <= 3; ++n) EXPECT_EQ(store_->part_calls(n), 1) << "part " << n;
  EXPECT_EQ(store_->part_calls(4), 2);
  EXPECT_EQ(Stored(), data_);
}

TEST_F(MultipartUploadTest, AResumableUploadIsAbandonedAfterAPermanentFailure) {
  store_->FailPart(6, 1, Status::AccessDenied("injected 403"));
  StringPartReader reader(data_);
  MemoryJournal journal;
  MultipartOutcome out = Upload(reader, journal);
  EXPECT_EQ(out.status.code(), ErrorCode::kAccessDenied);
  EXPECT_EQ(journal.abandoned, 1);
  EXPECT_EQ(OpenUploads(), 0u);
}

TEST_F(MultipartUploadTest, AnUploadGoneAtTheDestinationIsForgotten) {
  options_.retry.max_attempts = 1;
  store_->FailPart(2, 1, Status::NotFound("NoSuchUpload"));
  StringPartReader reader(data_);
  MemoryJournal journal;
  MultipartOutcome out = Upload(reader, journal);
  EXPECT_EQ(out.status.code(), ErrorCode::kPreconditionFailed) << out.status.ToString();
  EXPECT_NE(out.status.message().find("the next attempt starts a new one"), std::string::npos);
  EXPECT_EQ(journal.abandoned, 1);
  EXPECT_TRUE(journal.id.empty());
}

TEST_F(MultipartUploadTest, ARefusedCompletionKeepsTheParts) {
  StringPartReader reader(data_);
  MemoryJournal journal;
  journal.permit = Status::Cancelled("lease running out");
  MultipartOutcome out = Upload(reader, journal);
  EXPECT_EQ(out.status.code(), ErrorCode::kCancelled);
  EXPECT_EQ(out.step, UploadStep::kPermit);
  EXPECT_EQ(journal.abandoned, 0);
  EXPECT_EQ(journal.parts.size(), 10u);
  EXPECT_EQ(OpenUploads(), 1u);
}

TEST_F(MultipartUploadTest, AJournalThatCannotRecordTheCreateAbortsIt) {
  StringPartReader reader(data_);
  MemoryJournal journal;
  journal.created_answer = Status::IoError("state store gone");
  MultipartOutcome out = Upload(reader, journal);
  EXPECT_EQ(out.status.code(), ErrorCode::kIoError);
  EXPECT_EQ(out.step, UploadStep::kJournal);
  EXPECT_EQ(store_->all_part_calls(), 0);
  EXPECT_EQ(OpenUploads(), 0u);
}

TEST_F(MultipartUploadTest, TheWholeMd5IsCheckedInPartOrder) {
  for (bool contiguous : {true, false}) {
    options_.whole_md5 = HexLower(Md5(data_));
    StringPartReader reader(data_, contiguous);
    UploadJournal one_shot;
    MultipartOutcome out = Upload(reader, one_shot);
    ASSERT_TRUE(out.status.ok()) << contiguous << ": " << out.status.ToString();
    EXPECT_EQ(Stored(), data_);
  }
}

TEST_F(MultipartUploadTest, PartsThatDoNotAddUpToTheWholeMd5AreAbandoned) {
  options_.whole_md5 = HexLower(Md5("something else"));
  StringPartReader reader(data_);
  MemoryJournal journal;
  MultipartOutcome out = Upload(reader, journal);
  EXPECT_EQ(out.status.code(), ErrorCode::kCorruption);
  EXPECT_EQ(out.step, UploadStep::kVerify);
  EXPECT_EQ(journal.abandoned, 1);
  EXPECT_EQ(OpenUploads(), 0u);
  EXPECT_FALSE(local_->Head("obj").ok());
}

TEST_F(MultipartUploadTest, TheBudgetBoundsThePartsInFlight) {
  ByteBudget budget(kPart);  // one part's worth
  options_.budget = &budget;
  options_.concurrency = 4;
  StringPartReader reader(data_);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(reader.max_in_flight(), 1);
  EXPECT_EQ(Stored(), data_);
}

TEST_F(MultipartUploadTest, RangePartReaderCopiesOneVersionOfAnObject) {
  StringSource body(data_);
  auto src = local_->Put("src", body, data_.size(), PutOptions{});
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  options_.whole_md5 = HexLower(Md5(data_));
  RangePartReader reader(*local_, "src", src->etag);
  UploadJournal one_shot;
  MultipartOutcome out = Upload(reader, one_shot);
  ASSERT_TRUE(out.status.ok()) << out.status.ToString();
  EXPECT_EQ(Stored(), data_);

  RangePartReader stale(*local_, "src", "0123456789abcdef0123456789abcdef");
  out = Upload(stale, one_shot);
  EXPECT_EQ(out.status.code(), ErrorCode::kPreconditionFailed) << out.status.ToString();
  EXPECT_EQ(out.step, UploadStep::kRead);
  EXPECT_EQ(OpenUploads(), 0u);
}

}  // namespace
}  // namespace ferry
