// The operations docs/openapi.yaml documents, for tests that check the
// document against the routes (src/api/openapi_test.cc) and against the
// running daemon (tests/daemon/api_read_test.cc).
#ifndef CHIME_TESTING_OPENAPI_DOC_H_
#define CHIME_TESTING_OPENAPI_DOC_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "src/config/yaml_tree.h"

namespace chime::testing {

struct DocumentedOperation {
  std::string method;  // "GET"
  std::string path;    // "/v1/jobs/{namespace}/{id}"
  std::vector<std::string> query_params;
  // `path` with values for its parameters (run 1).
  std::string SamplePath(absl::string_view name_space = "default",
                         absl::string_view id = "a") const {
    return absl::StrReplaceAll(
        path, {{"{namespace}", name_space}, {"{id}", id}, {"{run}", "1"}});
  }
};

// Every operation of the OpenAPI document at `file` (parameters given by
// $ref to components/parameters resolved).
inline absl::StatusOr<std::vector<DocumentedOperation>> ReadOpenApi(
    const std::string& file) {
  using config::internal::Node;
  std::ifstream in(file);
  if (!in) return absl::NotFoundError(absl::StrCat(file, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<config::internal::YamlStream> yaml =
      config::internal::ParseYaml(text.str());
  if (!yaml.ok()) return yaml.status();
  const Node& root = *yaml->documents().at(0);
  const Node* paths = root.Find("paths");
  const Node* components = root.Find("components");
  const Node* shared =
      components != nullptr ? components->Find("parameters") : nullptr;
  if (paths == nullptr || !paths->IsMapping()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": no paths"));
  }
  // A parameter node, or the one its $ref names.
  const auto resolve = [&](const Node& p) -> const Node* {
    const Node* ref = p.Find("$ref");
    if (ref == nullptr) return &p;
    absl::string_view name = ref->text();
    if (!absl::ConsumePrefix(&name, "#/components/parameters/") ||
        shared == nullptr) {
      return nullptr;
    }
    return shared->Find(name);
  };
  std::vector<DocumentedOperation> ops;
  for (size_t i = 0; i < paths->size(); ++i) {
    const Node& item = paths->value(i);
    for (size_t j = 0; j < item.size(); ++j) {
      const std::string method(item.key(j).text());
      if (method == "parameters") continue;
      DocumentedOperation op{
          absl::AsciiStrToUpper(method), std::string(paths->key(i).text()), {}};
      if (const Node* params = item.value(j).Find("parameters")) {
        for (size_t k = 0; k < params->size(); ++k) {
          const Node* p = resolve(params->item(k));
          if (p == nullptr) {
            return absl::InvalidArgumentError(
                absl::StrCat(op.path, ": a parameter $ref does not resolve"));
          }
          const Node* in_node = p->Find("in");
          const Node* name = p->Find("name");
          if (in_node != nullptr && name != nullptr &&
              in_node->text() == "query") {
            op.query_params.emplace_back(name->text());
          }
        }
      }
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

}  // namespace chime::testing

#endif  // CHIME_TESTING_OPENAPI_DOC_H_
