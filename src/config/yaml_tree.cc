#include "src/config/yaml_tree.h"

#include <yaml.h>

#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace chime::config::internal {
namespace {

bool IsNullText(absl::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

Mark ToMark(const yaml_mark_t& m) {
  return {.pos = static_cast<int>(m.index),
          .line = static_cast<int>(m.line),
          .column = static_cast<int>(m.column)};
}

bool IsContinuationByte(char c) { return (c & 0xC0) == 0x80; }

// The byte offset of `mark` in `text`: libyaml counts characters, after a
// UTF-8 byte-order mark if there is one. npos when the text is shorter.
size_t ByteOffset(absl::string_view text, const Mark& mark) {
  size_t i = absl::StartsWith(text, "\xEF\xBB\xBF") ? 3 : 0;
  for (int chars = 0; i < text.size(); ++i) {
    if (IsContinuationByte(text[i])) continue;
    if (chars++ == mark.pos) return i;
  }
  return absl::string_view::npos;
}

// Where a reader (encoding) error is: libyaml reports only a byte offset.
Mark MarkOfByte(absl::string_view text, size_t offset) {
  Mark m;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (IsContinuationByte(text[i])) continue;
    ++m.pos;
    if (text[i] == '\n') {
      ++m.line;
      m.column = 0;
    } else {
      ++m.column;
    }
  }
  return m;
}

// libyaml's wording for errors that yaml-cpp, chime's earlier parser, put
// differently; users and tests know these messages.
struct Rewording {
  const char* context;  // matches when null or equal
  const char* problem;  // matches when null or equal
  const char* message;
  bool at_context;  // point at the context mark, not at the problem
};
constexpr Rewording kRewordings[] = {
    // "*/5 * * * *": an alias whose name cannot start with '/'.
    {"while scanning an alias", nullptr, "the referenced anchor is not defined",
     true},
    {nullptr, "did not find expected ',' or ']'",
     "end of sequence flow not found", false},
    {nullptr, "did not find expected ',' or '}'", "end of map flow not found",
     false},
    {nullptr, "found character that cannot start any token", "unknown token",
     false},
};

bool Matches(const char* want, const char* got) {
  return want == nullptr || (got != nullptr && std::strcmp(want, got) == 0);
}

}  // namespace

// --- TreeAssembler ---
// Collections are built bottom-up: a collection's children collect on
// `pending_` until it ends, then move to the stream's child array as one
// contiguous run. Nodes and scalar text are addressed by index while the
// vectors grow and turned into pointers once at the end (Finish).

TreeAssembler::TreeAssembler(size_t text_hint) {
  stream_.text_.reserve(text_hint);
}

uint32_t TreeAssembler::NewNode(Node::Kind kind, const Mark& mark) {
  const auto n = static_cast<uint32_t>(stream_.nodes_.size());
  Node& node = stream_.nodes_.emplace_back();
  node.kind_ = kind;
  node.mark_ = mark;
  spans_.emplace_back();
  return n;
}

uint32_t TreeAssembler::Scalar(absl::string_view text, bool plain,
                               const Mark& mark) {
  const uint32_t n = NewNode(Node::Kind::kScalar, mark);
  stream_.nodes_[n].plain_ = plain;
  spans_[n].text_offset = static_cast<uint32_t>(stream_.text_.size());
  spans_[n].text_size = static_cast<uint32_t>(text.size());
  stream_.text_.insert(stream_.text_.end(), text.begin(), text.end());
  Add(n);
  return n;
}

uint32_t TreeAssembler::Null(const Mark& mark) {
  const uint32_t n = NewNode(Node::Kind::kNull, mark);
  stream_.nodes_[n].plain_ = true;  // a null is written plain
  Add(n);
  return n;
}

uint32_t TreeAssembler::Start(Node::Kind kind, const Mark& mark) {
  const uint32_t n = NewNode(kind, mark);
  Add(n);
  open_.push_back({.node = n, .first_pending = pending_.size()});
  return n;
}

void TreeAssembler::Add(uint32_t n) {
  if (open_.empty()) {
    root_ = n;
  } else {
    pending_.push_back(n);
  }
}

void TreeAssembler::End() {
  const Open top = open_.back();
  open_.pop_back();
  const size_t count = pending_.size() - top.first_pending;
  Node& node = stream_.nodes_[top.node];
  node.size_ = static_cast<uint32_t>(node.IsMapping() ? count / 2 : count);
  spans_[top.node].first_child = static_cast<uint32_t>(child_index_.size());
  child_index_.insert(child_index_.end(), pending_.begin() + top.first_pending,
                      pending_.end());
  pending_.resize(top.first_pending);
}

bool TreeAssembler::IsOpen(uint32_t n) const {
  for (const Open& o : open_) {
    if (o.node == n) return true;
  }
  return false;
}

YamlStream TreeAssembler::Finish() {
  YamlStream& s = stream_;
  s.children_.reserve(child_index_.size());
  for (uint32_t n : child_index_) s.children_.push_back(&s.nodes_[n]);
  for (size_t i = 0; i < s.nodes_.size(); ++i) {
    Node& node = s.nodes_[i];
    const Span& span = spans_[i];
    if (node.IsScalar()) {
      node.text_ =
          absl::string_view(s.text_.data() + span.text_offset, span.text_size);
    } else if (node.size_ > 0) {
      node.children_ = s.children_.data() + span.first_child;
    }
  }
  for (uint32_t root : roots_) s.documents_.push_back(&s.nodes_[root]);
  return std::move(stream_);
}

// --- ParseYaml: libyaml's events into a TreeAssembler ---

class TreeBuilder {
 public:
  // Scalars rarely outgrow the text that spells them.
  explicit TreeBuilder(absl::string_view text)
      : text_(text), tree_(text.size()) {}

  absl::StatusOr<YamlStream> Run() {
    if (text_.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError("invalid YAML: the text is too large");
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
      return absl::ResourceExhaustedError("cannot start the YAML parser");
    }
    yaml_parser_set_input_string(
        &parser, reinterpret_cast<const unsigned char*>(text_.data()),
        text_.size());
    absl::Status status;
    for (bool done = false; !done && status.ok();) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser, &event)) {
        status = ParserError(parser);
        break;
      }
      done = event.type == YAML_STREAM_END_EVENT;
      status = Handle(event);
      yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    if (!status.ok()) return status;
    return tree_.Finish();
  }

 private:
  absl::Status Handle(const yaml_event_t& event) {
    const Mark mark = ToMark(event.start_mark);
    switch (event.type) {
      case YAML_DOCUMENT_START_EVENT:
        anchors_.clear();
        return absl::OkStatus();
      case YAML_DOCUMENT_END_EVENT:
        tree_.EndDocument();
        return absl::OkStatus();
      case YAML_ALIAS_EVENT:
        return Alias(reinterpret_cast<const char*>(event.data.alias.anchor),
                     mark);
      case YAML_SCALAR_EVENT: {
        const auto& s = event.data.scalar;
        const absl::string_view value(reinterpret_cast<const char*>(s.value),
                                      s.length);
        const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
        const bool null = plain && s.tag == nullptr && IsNullText(value);
        Anchor(s.anchor,
               null ? tree_.Null(mark) : tree_.Scalar(value, plain, mark));
        return absl::OkStatus();
      }
      case YAML_SEQUENCE_START_EVENT:
        Anchor(event.data.sequence_start.anchor,
               tree_.Start(Node::Kind::kSequence, mark));
        return absl::OkStatus();
      case YAML_MAPPING_START_EVENT:
        Anchor(event.data.mapping_start.anchor,
               tree_.Start(Node::Kind::kMapping, mark));
        return absl::OkStatus();
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        // libyaml pairs every start with an end, so a collection is open.
        tree_.End();
        return absl::OkStatus();
      default:  // stream start and end
        return absl::OkStatus();
    }
  }

  void Anchor(const yaml_char_t* anchor, uint32_t n) {
    // A later anchor of the same name replaces the earlier one.
    if (anchor != nullptr) anchors_[reinterpret_cast<const char*>(anchor)] = n;
  }

  absl::Status Alias(const char* name, const Mark& mark) {
    auto it = anchors_.find(name);
    if (it == anchors_.end()) {
      return Error(mark, "the referenced anchor is not defined");
    }
    if (tree_.IsOpen(it->second)) {
      return Error(mark, absl::StrCat("the alias *", name,
                                      " refers to a value that contains it"));
    }
    tree_.AddExisting(it->second);
    return absl::OkStatus();
  }

  absl::Status ParserError(const yaml_parser_t& parser) {
    if (parser.error == YAML_READER_ERROR) {
      return Error(MarkOfByte(text_, parser.problem_offset),
                   parser.problem != nullptr ? parser.problem
                                             : "cannot decode the text");
    }
    if (parser.error == YAML_MEMORY_ERROR || parser.problem == nullptr) {
      return absl::ResourceExhaustedError("invalid YAML: out of memory");
    }
    for (const Rewording& r : kRewordings) {
      if (Matches(r.context, parser.context) &&
          Matches(r.problem, parser.problem)) {
        return Error(
            ToMark(r.at_context ? parser.context_mark : parser.problem_mark),
            r.message);
      }
    }
    std::string message = parser.problem;
    if (parser.context != nullptr) {
      const Mark at = ToMark(parser.context_mark);
      absl::StrAppend(&message, " (", parser.context, " at ", at.line + 1, ":",
                      at.column + 1, ")");
    }
    return Error(ToMark(parser.problem_mark), message);
  }

  // "<line>:<column>: invalid YAML: <problem>", with advice when the text
  // at `mark` is a '*' (an alias) or '@' (reserved) that starts a value.
  absl::Status Error(const Mark& mark, absl::string_view problem) const {
    std::string message = absl::StrCat(mark.line + 1, ":", mark.column + 1,
                                       ": invalid YAML: ", problem);
    const size_t at = ByteOffset(text_, mark);
    if (at != absl::string_view::npos &&
        (text_[at] == '*' || text_[at] == '@')) {
      absl::StrAppend(&message, " (quote a value that starts with ",
                      text_.substr(at, 1), ", e.g. schedule: \"*/5 * * * *\")");
    }
    return absl::InvalidArgumentError(message);
  }

  const absl::string_view text_;
  TreeAssembler tree_;
  std::map<std::string, uint32_t, std::less<>> anchors_;
};

Node Node::Scalar(absl::string_view text) {
  Node n;
  n.kind_ = Kind::kScalar;
  n.text_ = text;
  return n;
}

const Node* Node::Find(absl::string_view name) const {
  if (!IsMapping()) return nullptr;
  for (size_t i = 0; i < size_; ++i) {
    if (key(i).IsScalar() && key(i).text() == name) return &value(i);
  }
  return nullptr;
}

absl::StatusOr<YamlStream> ParseYaml(absl::string_view text) {
  return TreeBuilder(text).Run();
}

}  // namespace chime::config::internal
