#include "src/config/api_config.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/config/job_file.h"
#include "src/exec/job_policy.h"

namespace chime::config::internal {
namespace {

constexpr absl::string_view kRoles[] = {"read", "write", "admin"};

}  // namespace

// api_tokens: a list of {name, role, token | token_file}.
absl::StatusOr<std::vector<ApiToken>> ReadApiTokens(const Value& v) {
  if (!v.node->IsSequence()) {
    return ErrorAt(
        v, absl::StrCat("expected a list of tokens, got ", Describe(*v.node)));
  }
  constexpr absl::string_view kFields[] = {"name", "role", "token",
                                           "token_file"};
  std::vector<ApiToken> tokens;
  for (size_t i = 0; i < v.node->size(); ++i) {
    const Value item{.node = &v.node->item(i),
                     .path = IndexPath(v.path, i),
                     .mark = v.node->item(i).mark()};
    ASSIGN_OR_RETURN(Mapping m, Mapping::Read(item, "a token", kFields));
    ApiToken token;
    const std::optional<Value> name = m.Get("name");
    if (!name.has_value()) return ErrorAt(item, "name: required");
    ASSIGN_OR_RETURN(token.name, ReadString(*name));
    if (token.name.empty() ||
        token.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM"
                                     "NOPQRSTUVWXYZ0123456789._-") !=
            std::string::npos) {
      return ErrorAt(*name, "use letters, digits, '.', '_', '-'");
    }
    if (std::optional<Value> role = m.Get("role")) {
      ASSIGN_OR_RETURN(size_t r, ReadChoice(*role, kRoles));
      token.role = static_cast<ApiToken::Role>(r);
    }
    const std::optional<Value> inline_token = m.Get("token");
    const std::optional<Value> file = m.Get("token_file");
    if (inline_token.has_value() == file.has_value()) {
      return ErrorAt(item, "give exactly one of token, token_file");
    }
    const Value& where = inline_token.has_value() ? *inline_token : *file;
    if (inline_token.has_value()) {
      ASSIGN_OR_RETURN(token.token, ReadString(*inline_token));
    } else {
      ASSIGN_OR_RETURN(std::string path, ReadString(*file));
      absl::StatusOr<std::string> text = ReadFile(path);
      if (!text.ok()) return ErrorAt(*file, text.status().message());
      token.token = std::string(absl::StripAsciiWhitespace(*text));
    }
    if (token.token.size() < 16) {
      return ErrorAt(where, "a token needs at least 16 characters");
    }
    for (const ApiToken& other : tokens) {
      if (other.name == token.name)
        return ErrorAt(*name, "a token of this name is given above");
      if (other.token == token.token)
        return ErrorAt(where,
                       "the same secret as token \"" + other.name + "\"");
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

absl::StatusOr<exec::JobPolicy> ReadApiJobs(const Value& v) {
  constexpr absl::string_view kFields[] = {"allowed_commands",
                                           "allowed_http_hosts", "run_as"};
  ASSIGN_OR_RETURN(Mapping m, Mapping::Read(v,
                                            "a mapping of allowed_commands, "
                                            "allowed_http_hosts and run_as",
                                            kFields));
  exec::JobPolicy policy;
  // Each list is checked entry by entry, so an error points at the entry.
  for (absl::string_view list : {"allowed_commands", "allowed_http_hosts"}) {
    std::optional<Value> items = m.Get(list);
    if (!items.has_value()) continue;
    ASSIGN_OR_RETURN(std::vector<std::string> entries, ReadStringList(*items));
    for (size_t i = 0; i < entries.size(); ++i) {
      exec::JobPolicy one;
      (list == "allowed_commands" ? one.allowed_commands
                                  : one.allowed_http_hosts) = {entries[i]};
      if (absl::Status s = exec::ValidateJobPolicy(one); !s.ok()) {
        const Value item{.node = &items->node->item(i),
                         .path = IndexPath(items->path, i),
                         .mark = items->node->item(i).mark()};
        absl::string_view why = s.message();
        why.remove_prefix(why.find(": ") + 2);  // "api_jobs.<list>[0]: "
        return ErrorAt(item, why);
      }
    }
    (list == "allowed_commands" ? policy.allowed_commands
                                : policy.allowed_http_hosts) =
        std::move(entries);
  }
  if (std::optional<Value> run_as = m.Get("run_as")) {
    ASSIGN_OR_RETURN(policy.run_as, ReadString(*run_as));
    if (policy.run_as.empty() || policy.run_as.front() == ':')
      return ErrorAt(*run_as, "give a user, or user:group");
  }
  return policy;
}

}  // namespace chime::config::internal
