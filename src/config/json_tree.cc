#include "src/config/json_tree.h"

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace chime::config::internal {
namespace {

using Json = nlohmann::ordered_json;

// RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;  // continuation bytes
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

class Walk {
 public:
  absl::Status Value(const Json& j) {
    switch (j.type()) {
      case Json::value_t::null:
        tree_.Null(kAt);
        return absl::OkStatus();
      case Json::value_t::string:
        return String(j.get_ref<const std::string&>());
      case Json::value_t::boolean:
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned:
      case Json::value_t::number_float:
        tree_.Scalar(j.dump(), /*plain=*/true, kAt);
        return absl::OkStatus();
      case Json::value_t::array:
        tree_.Start(Node::Kind::kSequence, kAt);
        for (const Json& item : j) {
          if (absl::Status s = Value(item); !s.ok()) return s;
        }
        tree_.End();
        return absl::OkStatus();
      case Json::value_t::object:
        tree_.Start(Node::Kind::kMapping, kAt);
        for (const auto& [key, value] : j.items()) {
          if (absl::Status s = String(key); !s.ok()) return s;
          if (absl::Status s = Value(value); !s.ok()) return s;
        }
        tree_.End();
        return absl::OkStatus();
      default:  // binary, discarded
        return absl::InvalidArgumentError("a value is not JSON text");
    }
  }

  YamlStream Finish() {
    tree_.EndDocument();
    return tree_.Finish();
  }

 private:
  static constexpr Mark kAt{};

  absl::Status String(const std::string& s) {
    if (!IsValidUtf8(s))
      return absl::InvalidArgumentError("a string is not valid UTF-8");
    tree_.Scalar(s, /*plain=*/false, kAt);
    return absl::OkStatus();
  }

  TreeAssembler tree_;
};

}  // namespace

absl::StatusOr<YamlStream> TreeFromJson(const Json& json) {
  Walk walk;
  if (absl::Status s = walk.Value(json); !s.ok()) return s;
  return walk.Finish();
}

}  // namespace chime::config::internal
