// Streamed responses (response_stream.h) over real sockets on 127.0.0.1,
// plain and TLS: chunks arrive while the stream is open, the producer learns
// of a client that leaves, Stop() ends open streams promptly, a client that
// does not read is cut off at the bound. Every wait is bounded (seconds).
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/http/server.h"
#include "src/http/test_certificate.h"
#include "testing/status_matchers.h"

namespace chime::http {
namespace {

using ::chime::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::Not;

// Hands the streams the handler made to the test (the producer).
class StreamSlot {
 public:
  void Put(std::shared_ptr<ResponseStream> stream) {
    absl::MutexLock lock(&mu_);
    stream_ = std::move(stream);
  }
  // The stream, once the handler made it (null after 5 s).
  std::shared_ptr<ResponseStream> Wait() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](std::shared_ptr<ResponseStream>* s) { return *s != nullptr; },
            &stream_),
        absl::Seconds(5));
    return stream_;
  }

 private:
  absl::Mutex mu_;
  std::shared_ptr<ResponseStream> stream_ ABSL_GUARDED_BY(mu_);
};

// GET /stream answers with a stream of at most `max_buffered` bytes behind.
Router StreamRouter(StreamSlot& slot, size_t max_buffered = 1 << 20) {
  Router router;
  router.Handle("GET", "/stream", [&slot, max_buffered](const Request&) {
    std::shared_ptr<ResponseStream> body = ResponseStream::Create(max_buffered);
    slot.Put(body);
    return Response{.content_type = "text/event-stream",
                    .headers = {{"Cache-Control", "no-cache"}},
                    .stream = body};
  });
  return router;
}

// A blocking TCP client with bounded reads of the raw bytes.
class RawClient {
 public:
  // `receive_buffer` > 0 sets SO_RCVBUF (before connecting, so it holds).
  explicit RawClient(uint16_t port, int receive_buffer = 0)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                 sizeof(receive_buffer));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << errno;
  }
  ~RawClient() { Close(); }

  void Send(const std::string& bytes) {
    EXPECT_EQ(write(fd_, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // Reads until what arrived contains `want` (true), or the server closes
  // the connection or `limit` passes (false). received() has it all.
  bool ReadUntil(absl::string_view want,
                 absl::Duration limit = absl::Seconds(5)) {
    const absl::Time deadline = absl::Now() + limit;
    while (!absl::StrContains(received_, want)) {
      if (!ReadSome(deadline)) return false;
    }
    return true;
  }
  // Reads until the server closes the connection (true) or `limit` passes.
  bool ReadToEnd(absl::Duration limit = absl::Seconds(5)) {
    const absl::Time deadline = absl::Now() + limit;
    while (ReadSome(deadline)) {
    }
    return eof_;
  }
  const std::string& received() const { return received_; }

 private:
  bool ReadSome(absl::Time deadline) {
    const int wait_ms =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) return false;
    pollfd p{.fd = fd_, .events = POLLIN};
    if (poll(&p, 1, wait_ms) != 1) return false;
    char buffer[64 << 10];
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return false;
    }
    received_.append(buffer, n);
    return true;
  }

  int fd_;
  std::string received_;
  bool eof_ = false;
};

constexpr char kGetStream[] = "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

std::unique_ptr<HttpServer> Start(HttpServer::Options options) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(std::move(options));
  EXPECT_THAT(server, IsOk());
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(ServerStreamTest, ChunksArriveBeforeTheStreamEnds) {
  StreamSlot slot;
  auto server = Start(
      {.read_timeout = absl::Milliseconds(300), .router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  client.Send(kGetStream);
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(client.ReadUntil("\r\n\r\n")) << client.received();
  EXPECT_THAT(client.received(), HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(client.received(), HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(client.received(), HasSubstr("Connection: close"));
  EXPECT_THAT(client.received(), HasSubstr("Cache-Control: no-cache"));

  ASSERT_TRUE(stream->Write("first\n"));
  EXPECT_TRUE(client.ReadUntil("6\r\nfirst\n\r\n")) << client.received();
  // Quiet for longer than read_timeout: it does not apply while streaming.
  absl::SleepFor(absl::Milliseconds(600));
  EXPECT_TRUE(stream->open());
  ASSERT_TRUE(stream->Write("second\n"));
  EXPECT_TRUE(client.ReadUntil("7\r\nsecond\n\r\n")) << client.received();
  absl::Notification ended;
  stream->OnEnd([&ended] { ended.Notify(); });
  stream->Close();
  EXPECT_FALSE(stream->Write("late"));
  // The final chunk, then the server closes the connection.
  EXPECT_TRUE(client.ReadToEnd()) << client.received();
  EXPECT_TRUE(absl::EndsWith(client.received(), "\r\n0\r\n\r\n"))
      << client.received();
  EXPECT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

TEST(ServerStreamTest, TheProducerLearnsThatTheClientLeft) {
  StreamSlot slot;
  auto server = Start({.router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  client.Send(kGetStream);
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(client.ReadUntil("\r\n\r\n"));
  absl::Notification ended;
  stream->OnEnd([&ended] { ended.Notify(); });
  client.Close();
  // Noticed without any write: the server watches the connection.
  ASSERT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_FALSE(stream->open());
  EXPECT_FALSE(stream->Write("anyone there?"));
}

TEST(ServerStreamTest, StopWithAnOpenStreamReturnsPromptly) {
  StreamSlot slot;
  auto server = Start({.router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  client.Send(kGetStream);
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(client.ReadUntil("\r\n\r\n"));
  ASSERT_TRUE(stream->Write("data\n"));
  absl::Notification ended;
  stream->OnEnd([&ended] { ended.Notify(); });
  const absl::Time start = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_TRUE(ended.HasBeenNotified());
  EXPECT_FALSE(stream->Write("after stop"));
  EXPECT_TRUE(client.ReadToEnd());  // the connection is closed
}

TEST(ServerStreamTest, AClientThatDoesNotReadIsCutOffAtTheBound) {
  StreamSlot slot;
  constexpr size_t kBound = 256 << 10;
  auto server = Start({.router = StreamRouter(slot, kBound)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port(), /*receive_buffer=*/4096);
  client.Send(kGetStream);
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  absl::Notification ended;
  stream->OnEnd([&ended] { ended.Notify(); });
  // The client reads nothing: the kernel's buffers fill, then the stream's.
  const std::string piece(16 << 10, 'x');
  size_t written = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (stream->Write(piece) && absl::Now() < deadline) {
    written += piece.size();
    absl::SleepFor(absl::Microseconds(200));
  }
  EXPECT_FALSE(stream->open()) << "still open after " << written << " bytes";
  // Socket buffers hold a few MiB at most; the stream's bound the rest.
  EXPECT_LT(written, size_t{64} << 20);
  EXPECT_GE(written, kBound - piece.size());
  EXPECT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The server dropped the connection: the client reads what was in flight,
  // then the end.
  EXPECT_TRUE(client.ReadToEnd(absl::Seconds(10)));
}

TEST(ServerStreamTest, HeadGetsTheHeadAndTheStreamEnds) {
  StreamSlot slot;
  auto server = Start({.router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  client.Send("HEAD /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  EXPECT_TRUE(client.ReadToEnd());
  EXPECT_THAT(client.received(), HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(client.received(), Not(HasSubstr("chunked")));
  EXPECT_FALSE(stream->Write("x"));
}

TEST(ServerStreamTest, Http10GetsABodyThatEndsWithTheConnection) {
  StreamSlot slot;
  auto server = Start({.router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  RawClient client(server->port());
  client.Send("GET /stream HTTP/1.0\r\n\r\n");
  std::shared_ptr<ResponseStream> stream = slot.Wait();
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(stream->Write("one\n"));
  ASSERT_TRUE(client.ReadUntil("\r\n\r\none\n")) << client.received();
  stream->Close();
  EXPECT_TRUE(client.ReadToEnd());
  EXPECT_TRUE(absl::EndsWith(client.received(), "\r\n\r\none\n"))
      << client.received();
  EXPECT_THAT(client.received(), Not(HasSubstr("chunked")));
}

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

TEST(ServerStreamTest, StreamsOverTls) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  absl::StatusOr<TestCertificateFiles> files = WriteTestCertificate(
      ::testing::TempDir(), UniqueName("server_stream_test"));
  ASSERT_THAT(files, IsOk());
  StreamSlot slot;
  auto server = Start({.tls_cert_file = files->cert_file,
                       .tls_key_file = files->key_file,
                       .router = StreamRouter(slot)});
  ASSERT_NE(server, nullptr);
  // The producer writes one line, waits until the client has it, then
  // closes: the client can only finish if chunks arrive while it is open.
  std::string body;
  std::atomic<bool> first_seen{false};
  bool seen_while_open = false;
  std::thread producer([&] {
    std::shared_ptr<ResponseStream> stream = slot.Wait();
    if (stream == nullptr) return;
    stream->Write("first\n");
    for (int i = 0; i < 500 && !first_seen; ++i)
      absl::SleepFor(absl::Milliseconds(10));
    seen_while_open = first_seen;
    stream->Write("second\n");
    stream->Close();
  });
  CURL* curl = curl_easy_init();
  const std::string url =
      absl::StrCat("https://127.0.0.1:", server->port(), "/stream");
  struct Sink {
    std::string* body;
    std::atomic<bool>* first_seen;
  } sink{&body, &first_seen};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CAINFO, files->cert_file.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION,
      +[](char* data, size_t size, size_t n, void* out) {
        Sink* s = static_cast<Sink*>(out);
        Collect(data, size, n, s->body);
        if (absl::StrContains(*s->body, "first\n")) *s->first_seen = true;
        return size * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  producer.join();
  EXPECT_EQ(code, CURLE_OK) << curl_easy_strerror(code);
  EXPECT_TRUE(seen_while_open);
  EXPECT_EQ(body, "first\nsecond\n");
}

}  // namespace
}  // namespace chime::http
