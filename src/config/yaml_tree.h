// A light, read-only YAML node tree for chime's own files (job files,
// chime.yaml), built from libyaml's event parser.
//
// ParseYaml turns a text into a YamlStream: one root Node per document, each
// node a null, a scalar (its text, and whether it was written plain), a
// sequence or a mapping, with the position where it starts. Nothing else of
// YAML's type system is applied: `yes`, `5` and `1.5` are scalars whose
// meaning is up to the reader (yaml_fields.h), and mappings keep every entry
// in file order, repeated keys included, so that readers can report them.
//
// Null is a plain, untagged scalar `~`, `null`, `Null`, `NULL` or nothing at
// all (`key:`); a quoted "null" or `!!str null` is a scalar. Anchors and
// aliases are supported: an alias is the anchored node itself (same Node, same
// mark), so a message about it points at the anchor's value. An alias to a
// node that is not (yet) complete, or to an undefined anchor, is an error.
// Tags are otherwise ignored, and mapping keys may be any node. Merge keys
// (`<<`) have no special meaning.
//
//   ASSIGN_OR_RETURN(YamlStream yaml, ParseYaml(text));
//   for (const Node* root : yaml.documents()) { ... root->IsMapping() ... }
//
// Marks are 0-based; messages print them 1-based (yaml_fields.h ErrorAt).
//
// Internal to src/config. Thread-safety: a YamlStream is immutable after
// ParseYaml and may be read from any thread; its Nodes live as long as it.
#ifndef CHIME_SRC_CONFIG_YAML_TREE_H_
#define CHIME_SRC_CONFIG_YAML_TREE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace chime::config::internal {

// A position in a text, all 0-based. `pos` counts characters from the start
// (after a byte-order mark), so it orders positions; it is not a byte offset.
struct Mark {
  int pos = 0;
  int line = 0;
  int column = 0;
};

// One node of a parsed document (or a standalone scalar, Node::Scalar). A
// Node is a view: it points into the YamlStream that holds it.
class Node {
 public:
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMapping };

  // A scalar with `text`, as if written quoted (never null), at mark 0:0.
  // The node refers to `text`, which must outlive it. For values that do not
  // come from a file, such as environment variables.
  static Node Scalar(absl::string_view text);

  Kind kind() const { return kind_; }
  bool IsNull() const { return kind_ == Kind::kNull; }
  bool IsScalar() const { return kind_ == Kind::kScalar; }
  bool IsSequence() const { return kind_ == Kind::kSequence; }
  bool IsMapping() const { return kind_ == Kind::kMapping; }

  // Where the node starts: its first character, or for a block mapping its
  // first key; for an empty value, where the parser noticed it was empty.
  const Mark& mark() const { return mark_; }

  // A scalar's text after YAML's unquoting and folding; "" for other kinds.
  absl::string_view text() const { return text_; }
  // True for a scalar written without quotes and not as a block (| or >).
  bool plain() const { return plain_; }

  // The number of items of a sequence or entries of a mapping; 0 otherwise.
  size_t size() const { return size_; }
  // REQUIRES: IsSequence() and i < size().
  const Node& item(size_t i) const { return *children_[i]; }
  // REQUIRES: IsMapping() and i < size(). Entries are in file order.
  const Node& key(size_t i) const { return *children_[2 * i]; }
  const Node& value(size_t i) const { return *children_[2 * i + 1]; }

  // The value of the first entry whose key is a scalar with text `name`, or
  // nullptr (also when this is not a mapping).
  const Node* Find(absl::string_view name) const;

 private:
  friend class TreeAssembler;

  Kind kind_ = Kind::kNull;
  bool plain_ = false;
  Mark mark_;
  absl::string_view text_;
  const Node* const* children_ = nullptr;  // sequence: items; mapping: k, v
  uint32_t size_ = 0;
};

// The documents of one parsed text. Move-only; moving keeps Nodes valid.
class YamlStream {
 public:
  YamlStream() = default;
  YamlStream(YamlStream&&) = default;
  YamlStream& operator=(YamlStream&&) = default;
  YamlStream(const YamlStream&) = delete;
  YamlStream& operator=(const YamlStream&) = delete;

  // The root of each document, in order. A text with no documents (empty,
  // only comments) has none; "---" alone is one document whose root is null.
  const std::vector<const Node*>& documents() const { return documents_; }

 private:
  friend class TreeAssembler;

  std::vector<Node> nodes_;
  std::vector<const Node*> children_;
  std::vector<char> text_;  // every scalar's text, back to back
  std::vector<const Node*> documents_;
};

// Builds a YamlStream node by node, in document order: a parser's events
// (ParseYaml's libyaml events; a JSON value's walk, json_tree.h) become
// calls. Each call returns the node's number, which an alias may add again.
//
//   TreeAssembler t;
//   t.Start(Node::Kind::kMapping, mark);
//   t.Scalar("id", /*plain=*/false, mark);
//   t.Scalar("backup", /*plain=*/false, mark);
//   t.End();
//   t.EndDocument();
//   YamlStream stream = t.Finish();
class TreeAssembler {
 public:
  // `text_hint`: about how many bytes of scalar text to expect.
  explicit TreeAssembler(size_t text_hint = 0);

  // A scalar, or a null, as the next child of the open collection (or as
  // the document's root).
  uint32_t Scalar(absl::string_view text, bool plain, const Mark& mark);
  uint32_t Null(const Mark& mark);
  // Opens a sequence or mapping as the next child; its children follow, a
  // mapping's as key, value, key, value. REQUIRES: End for each Start.
  uint32_t Start(Node::Kind kind, const Mark& mark);
  void End();
  // Node `n`, made before and complete, as the next child again (an alias).
  void AddExisting(uint32_t n) { Add(n); }
  // Whether node `n` is a collection not yet ended.
  bool IsOpen(uint32_t n) const;
  // The last root made is a document.
  void EndDocument() { roots_.push_back(root_); }
  // The stream; the assembler is spent.
  YamlStream Finish();

 private:
  struct Open {
    uint32_t node;
    size_t first_pending;
  };
  // Where a node's text and children are until Finish.
  struct Span {
    uint32_t text_offset = 0;
    uint32_t text_size = 0;
    uint32_t first_child = 0;
  };
  uint32_t NewNode(Node::Kind kind, const Mark& mark);
  void Add(uint32_t n);

  YamlStream stream_;
  std::vector<Span> spans_;            // parallel to stream_.nodes_
  std::vector<uint32_t> child_index_;  // becomes stream_.children_
  std::vector<uint32_t> pending_;      // children of the open collections
  std::vector<Open> open_;             // innermost last
  uint32_t root_ = 0;
  std::vector<uint32_t> roots_;
};

// Parses every document of `text` (UTF-8, or UTF-16 with a byte-order mark).
// Fails with InvalidArgument "<line>:<column>: invalid YAML: <problem>"
// (1-based) for the first syntax error anywhere in the text, an undefined or
// self-containing alias, or bad encoding. Where the problem is at a `*` or
// `@` that starts a value, the message adds how to quote it (an unquoted cron
// expression is the usual cause).
absl::StatusOr<YamlStream> ParseYaml(absl::string_view text);

}  // namespace chime::config::internal

#endif  // CHIME_SRC_CONFIG_YAML_TREE_H_
