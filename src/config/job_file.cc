#include "src/config/job_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "src/base/status_macros.h"
#include "src/config/job_fields.h"
#include "src/config/json_tree.h"
#include "src/config/yaml_fields.h"
#include "src/config/yaml_tree.h"

namespace chime::config {
namespace {

using internal::ErrorAt;
using internal::Value;

constexpr absl::string_view kTopKeys[] = {"jobs"};

// "2:5 (jobs[1])": where a job is, for messages about duplicates.
std::string Where(const FileJob& job) {
  std::string out = absl::StrCat(job.line, ":", job.column);
  if (!job.field_path.empty()) absl::StrAppend(&out, " (", job.field_path, ")");
  return out;
}

FileJob Located(JobSpec spec, const Value& v) {
  return {.spec = std::move(spec),
          .line = v.mark.line + 1,
          .column = v.mark.column + 1,
          .field_path = v.path};
}

// The jobs of one parsed document, unchecked for duplicate keys.
absl::StatusOr<std::vector<FileJob>> ReadDocument(const internal::Node& root) {
  const Value top = internal::RootValue(root);
  std::vector<FileJob> out;
  if (root.Find("jobs") == nullptr) {
    // A single job (ReadJob explains a top level that is not a mapping).
    ASSIGN_OR_RETURN(JobSpec spec, internal::ReadJob(top));
    out.push_back(Located(std::move(spec), top));
    return out;
  }
  ASSIGN_OR_RETURN(internal::Mapping file,
                   internal::Mapping::Read(top, "a mapping", kTopKeys));
  const Value jobs = *file.Get("jobs");
  if (!jobs.node->IsSequence()) {
    return ErrorAt(jobs, absl::StrCat("expected a list of jobs, got ",
                                      internal::Describe(*jobs.node)));
  }
  out.reserve(jobs.node->size());
  for (size_t i = 0; i < jobs.node->size(); ++i) {
    const internal::Node& item = jobs.node->item(i);
    const Value job{.node = &item,
                    .path = internal::IndexPath("jobs", i),
                    .mark = item.mark()};
    ASSIGN_OR_RETURN(JobSpec spec, internal::ReadJob(job));
    out.push_back(Located(std::move(spec), job));
  }
  return out;
}

// All of `yaml`'s jobs. Errors lack the file name.
absl::StatusOr<std::vector<FileJob>> ReadStream(
    const internal::YamlStream& yaml) {
  // Empty documents ("---" at the end) hold nothing.
  std::vector<const internal::Node*> docs;
  for (const internal::Node* root : yaml.documents()) {
    if (!root->IsNull()) docs.push_back(root);
  }
  if (docs.size() > 1) {
    return ErrorAt(docs[1]->mark(), "",
                   "a job file holds one YAML document; list several jobs "
                   "under jobs:");
  }
  if (docs.empty()) return std::vector<FileJob>();
  ASSIGN_OR_RETURN(std::vector<FileJob> jobs, ReadDocument(*docs[0]));
  std::map<JobKey, const FileJob*> seen;
  for (const FileJob& job : jobs) {
    auto [it, inserted] = seen.emplace(job.spec.key, &job);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(job.line, ":", job.column, ": ", job.field_path,
                       ": job \"", job.spec.key.ToString(),
                       "\" is already defined at ", Where(*it->second)));
    }
  }
  return jobs;
}

absl::StatusOr<std::vector<FileJob>> ReadText(absl::string_view text) {
  ASSIGN_OR_RETURN(internal::YamlStream yaml, internal::ParseYaml(text));
  return ReadStream(yaml);
}

// The jobs of a tree made of JSON (every node at 0:0).
absl::StatusOr<std::vector<JobSpec>> ReadJsonTree(
    const internal::YamlStream& yaml) {
  absl::StatusOr<std::vector<FileJob>> jobs = ReadStream(yaml);
  if (!jobs.ok()) {
    // Every node is at 0:0: the message's "1:1: " says nothing, nor does
    // the place of the earlier of two jobs with one key.
    absl::string_view message = jobs.status().message();
    absl::ConsumePrefix(&message, "1:1: ");
    return absl::InvalidArgumentError(
        absl::StrReplaceAll(message, {{" defined at 1:1 (", " defined ("}}));
  }
  std::vector<JobSpec> specs;
  specs.reserve(jobs->size());
  for (FileJob& job : *jobs) specs.push_back(std::move(job.spec));
  return specs;
}

}  // namespace

absl::StatusOr<std::vector<JobSpec>> ParseJobJson(
    const nlohmann::ordered_json& json) {
  ASSIGN_OR_RETURN(internal::YamlStream yaml, internal::TreeFromJson(json));
  return ReadJsonTree(yaml);
}

std::optional<absl::StatusOr<std::vector<JobSpec>>> ParseJobJsonText(
    absl::string_view text, int max_depth) {
  std::optional<internal::YamlStream> yaml =
      internal::TreeFromJsonText(text, max_depth);
  if (!yaml.has_value()) return std::nullopt;
  return ReadJsonTree(*yaml);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  std::string text;
  char buffer[1 << 14];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat(path, ": cannot read"));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

namespace {

bool IsJobFileName(absl::string_view name) {
  return !absl::StartsWith(name, ".") &&
         (absl::EndsWith(name, ".yaml") || absl::EndsWith(name, ".yml"));
}

}  // namespace

absl::StatusOr<std::vector<FileJob>> ParseJobFileWithLocations(
    absl::string_view path_for_messages, absl::string_view text) {
  absl::StatusOr<std::vector<FileJob>> jobs = ReadText(text);
  if (!jobs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_for_messages, ":", jobs.status().message()));
  }
  return jobs;
}

absl::StatusOr<std::vector<JobSpec>> ParseJobFile(
    absl::string_view path_for_messages, absl::string_view text) {
  ASSIGN_OR_RETURN(std::vector<FileJob> jobs,
                   ParseJobFileWithLocations(path_for_messages, text));
  std::vector<JobSpec> specs;
  specs.reserve(jobs.size());
  for (FileJob& job : jobs) specs.push_back(std::move(job.spec));
  return specs;
}

absl::StatusOr<std::vector<FileResult>> LoadJobDir(absl::string_view dir) {
  namespace fs = std::filesystem;
  const fs::path root{std::string(dir)};
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  std::vector<std::string> names;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;  // a dangling link is simply not a job file
    if (IsJobFileName(name) && it->is_regular_file(type_ec)) {
      names.push_back(name);
    }
  }
  if (ec) {
    return absl::ErrnoToStatus(ec.value(),
                               absl::StrCat("cannot list job directory ", dir));
  }
  std::sort(names.begin(), names.end());
  std::vector<FileResult> files(names.size());
  // Files are parsed in parallel (a directory of 100k jobs is mostly YAML
  // parsing); each thread takes the next file.
  std::atomic<size_t> next{0};
  const auto parse = [&] {
    for (size_t i = next++; i < names.size(); i = next++) {
      const std::string path = (root / names[i]).string();
      absl::StatusOr<std::string> text = ReadFile(path);
      files[i] = {.path = path,
                  .jobs = text.ok() ? ParseJobFileWithLocations(path, *text)
                                    : absl::StatusOr<std::vector<FileJob>>(
                                          text.status())};
    }
  };
  const size_t threads = std::min<size_t>(
      {std::max(1u, std::thread::hardware_concurrency()), names.size(), 8});
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(parse);
  parse();
  for (std::thread& t : helpers) t.join();
  RejectDuplicateKeys(&files);
  return files;
}

void RejectDuplicateKeys(std::vector<FileResult>* files) {
  struct Origin {
    std::string path;
    std::string where;
  };
  std::map<JobKey, Origin> seen;
  for (FileResult& file : *files) {
    if (!file.jobs.ok()) continue;
    absl::Status duplicate;
    for (const FileJob& job : *file.jobs) {
      auto it = seen.find(job.spec.key);
      if (it == seen.end()) continue;
      duplicate = absl::InvalidArgumentError(absl::StrCat(
          file.path, ":", job.line, ":", job.column, ": ", job.field_path,
          job.field_path.empty() ? "" : ": ", "job \"", job.spec.key.ToString(),
          "\" is already defined at ", it->second.path, ":", it->second.where));
      break;
    }
    if (!duplicate.ok()) {
      file.jobs = duplicate;
      continue;
    }
    for (const FileJob& job : *file.jobs) {
      seen.emplace(job.spec.key, Origin{file.path, Where(job)});
    }
  }
}

}  // namespace chime::config
