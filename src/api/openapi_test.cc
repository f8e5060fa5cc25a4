// docs/openapi.yaml against the routes the API registers: every documented
// operation reaches a handler, and every registration is documented.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/routes.h"
#include "testing/openapi_doc.h"

namespace chime::api {
namespace {

std::vector<testing::DocumentedOperation> Documented() {
  absl::StatusOr<std::vector<testing::DocumentedOperation>> ops =
      testing::ReadOpenApi(CHIME_SOURCE_DIR "/docs/openapi.yaml");
  EXPECT_TRUE(ops.ok()) << ops.status();
  return ops.ok() ? *ops : std::vector<testing::DocumentedOperation>{};
}

class OpenApiTest : public ::testing::Test {
 protected:
  OpenApiTest() {
    // Registration only: no handler is called, so no store or scheduler.
    AddRoutes(router_, ApiDeps{.auth = &auth_});
  }
  Authorizer auth_{{}};
  http::Router router_;
};

TEST_F(OpenApiTest, EveryDocumentedOperationReachesAHandler) {
  const std::vector<testing::DocumentedOperation> ops = Documented();
  EXPECT_GE(ops.size(), 7u);
  for (const testing::DocumentedOperation& op : ops) {
    EXPECT_TRUE(router_.Handles(op.method, op.SamplePath()))
        << op.method << " " << op.path;
  }
}

TEST_F(OpenApiTest, EveryRegistrationIsDocumented) {
  const std::vector<testing::DocumentedOperation> ops = Documented();
  for (const std::string& registration : router_.Registrations()) {
    const size_t space = registration.find(' ');
    const std::string method = registration.substr(0, space);
    std::string path = registration.substr(space + 1);
    const bool prefix = !path.empty() && path.back() == '*';
    if (prefix) path.pop_back();
    bool documented = false;
    for (const testing::DocumentedOperation& op : ops) {
      if (op.method != method) continue;
      documented |= prefix ? op.path.rfind(path, 0) == 0 : op.path == path;
    }
    EXPECT_TRUE(documented) << registration << " is not in docs/openapi.yaml";
  }
}

}  // namespace
}  // namespace chime::api
