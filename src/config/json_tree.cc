#include "src/config/json_tree.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
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

// nlohmann's SAX events into the tree, as Walk makes it of the value they
// would build. Every handler returns false to stop at something
// TreeFromJsonText leaves to the value's path.
class Events {
 public:
  explicit Events(int max_depth, size_t text_hint)
      : max_depth_(max_depth), tree_(text_hint) {}

  bool null() { return Child() && (tree_.Null(kAt), true); }
  bool boolean(bool b) { return PlainScalar(Json(b)); }
  bool number_integer(Json::number_integer_t n) { return PlainScalar(Json(n)); }
  bool number_unsigned(Json::number_unsigned_t n) {
    return PlainScalar(Json(n));
  }
  bool number_float(Json::number_float_t d, const std::string&) {
    return PlainScalar(Json(d));
  }
  bool string(std::string& s) { return Child() && String(s); }
  bool binary(Json::binary_t&) { return false; }
  bool start_object(size_t) { return Open(Node::Kind::kMapping); }
  bool start_array(size_t) { return Open(Node::Kind::kSequence); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    if (!open_.back().Add(k)) return false;  // given twice
    return String(k);
  }
  bool parse_error(size_t, const std::string&,
                   const nlohmann::detail::exception&) {
    return false;
  }

  YamlStream Finish() {
    tree_.EndDocument();
    return tree_.Finish();
  }

 private:
  static constexpr Mark kAt{};

  // An open collection: a mapping's keys so far, in a short list and past
  // kShort in a hash set (a body of 100,000 keys must not cost their square).
  struct Level {
    static constexpr size_t kShort = 16;
    std::vector<std::string> keys;
    absl::flat_hash_set<std::string> many;

    // False if `k` is there already.
    bool Add(const std::string& k) {
      if (!many.empty()) return many.insert(k).second;
      for (const std::string& seen : keys) {
        if (seen == k) return false;
      }
      keys.push_back(k);
      if (keys.size() > kShort) {
        many.insert(std::make_move_iterator(keys.begin()),
                    std::make_move_iterator(keys.end()));
        keys.clear();
      }
      return true;
    }
  };

  // A value may come here: inside a collection (the root is an object).
  bool Child() const { return !open_.empty(); }

  bool PlainScalar(const Json& j) {
    if (!Child()) return false;
    tree_.Scalar(j.dump(), /*plain=*/true, kAt);
    return true;
  }

  bool String(const std::string& s) {
    if (!IsValidUtf8(s)) return false;
    tree_.Scalar(s, /*plain=*/false, kAt);
    return true;
  }

  bool Open(Node::Kind kind) {
    const bool root = open_.empty();
    if (root ? (started_ || kind != Node::Kind::kMapping)
             : static_cast<int>(open_.size()) >= max_depth_)
      return false;
    started_ = true;
    tree_.Start(kind, kAt);
    open_.push_back({});
    return true;
  }

  bool Close() {
    tree_.End();
    open_.pop_back();
    return true;
  }

  const int max_depth_;
  bool started_ = false;
  std::vector<Level> open_;  // the collections not yet closed
  TreeAssembler tree_;
};

}  // namespace

std::optional<YamlStream> TreeFromJsonText(absl::string_view text,
                                           int max_depth) {
  Events events(max_depth, text.size());
  if (!Json::sax_parse(text.begin(), text.end(), &events,
                       nlohmann::detail::input_format_t::json,
                       /*strict=*/true)) {
    return std::nullopt;
  }
  return events.Finish();
}

absl::StatusOr<YamlStream> TreeFromJson(const Json& json) {
  Walk walk;
  if (absl::Status s = walk.Value(json); !s.ok()) return s;
  return walk.Finish();
}

}  // namespace chime::config::internal
