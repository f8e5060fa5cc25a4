#include "src/http/response_head.h"

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chime::http::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kAt =
    absl::FromUnixSeconds(1796169599);  // 2026-12-01 23:59:59Z

TEST(ResponseHeadTest, StatusLineHeadersLengthAndTheEmptyLine) {
  Response r{.status = 201, .content_type = "application/json"};
  r.headers = {{"Location", "/v1/jobs/a/b"}, {"ETag", "\"7\""}};
  EXPECT_EQ(FormatResponseHead(r, 1, /*keep_alive=*/true, 12, kAt),
            "HTTP/1.1 201 Created\r\n"
            "Server: chime\r\n"
            "Date: Tue, 01 Dec 2026 23:59:59 GMT\r\n"
            "Content-Type: application/json\r\n"
            "Location: /v1/jobs/a/b\r\n"
            "ETag: \"7\"\r\n"
            "Content-Length: 12\r\n"
            "\r\n");
}

TEST(ResponseHeadTest, ConnectionAsEachVersionNeedsIt) {
  const Response r{.status = 200};
  EXPECT_THAT(FormatResponseHead(r, 1, false, 0, kAt),
              HasSubstr("\r\nConnection: close\r\n"));
  EXPECT_THAT(FormatResponseHead(r, 1, true, 0, kAt),
              Not(HasSubstr("Connection")));
  EXPECT_THAT(FormatResponseHead(r, 0, true, 0, kAt),
              HasSubstr("HTTP/1.0 200 OK\r\n"));
  EXPECT_THAT(FormatResponseHead(r, 0, true, 0, kAt),
              HasSubstr("\r\nConnection: keep-alive\r\n"));
  EXPECT_THAT(FormatResponseHead(r, 0, false, 0, kAt),
              Not(HasSubstr("Connection")));
}

TEST(ResponseHeadTest, NoLengthFor204And304NorAnEmptyContentType) {
  const Response r{.status = 204, .content_type = ""};
  const std::string head = FormatResponseHead(r, 1, true, 0, kAt);
  EXPECT_THAT(head, Not(HasSubstr("Content-Length")));
  EXPECT_THAT(head, Not(HasSubstr("Content-Type")));
  EXPECT_THAT(FormatResponseHead(Response{.status = 304}, 1, true, 0, kAt),
              Not(HasSubstr("Content-Length")));
}

TEST(ResponseHeadTest, HeadersThatWouldBreakTheFramingAreDropped) {
  Response r{.status = 200, .content_type = "text/plain\r\nX-Evil: 1"};
  r.headers = {{"Content-Length", "99"},
               {"Connection", "close"},
               {"Transfer-Encoding", "chunked"},
               {"Date", "yesterday"},
               {"X-Ok", "fine"},
               {"X-Bad", "a\r\nX-Evil: 2"},
               {"Bad Name", "x"}};
  const std::string head = FormatResponseHead(r, 1, true, 5, kAt);
  EXPECT_THAT(head, Not(HasSubstr("Evil")));
  EXPECT_THAT(head, Not(HasSubstr("Content-Type")));
  EXPECT_THAT(head, Not(HasSubstr("99")));
  EXPECT_THAT(head, Not(HasSubstr("chunked")));
  EXPECT_THAT(head, Not(HasSubstr("yesterday")));
  EXPECT_THAT(head, Not(HasSubstr("Bad Name")));
  EXPECT_THAT(head, HasSubstr("\r\nX-Ok: fine\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Length: 5\r\n"));
}

}  // namespace
}  // namespace chime::http::internal
