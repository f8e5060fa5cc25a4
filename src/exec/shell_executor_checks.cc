// The checks of shell_executor_spawn.h: user and group lookup, working
// directory, PATH search. They run before the spawn so that the attempt's
// error names what was wrong; a spawn would only say ENOENT or EACCES.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/exec/shell_executor_spawn.h"

namespace chime::exec::shell_internal {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

// getpwnam_r/getpwuid_r with a buffer that grows on ERANGE. nullopt when there
// is no such user (or the lookup failed, which we cannot tell apart usefully).
template <typename Lookup>
std::optional<passwd> LookUpUser(Lookup lookup, std::vector<char>& buffer) {
  buffer.resize(1024);
  while (true) {
    passwd pw;
    passwd* found = nullptr;
    const int error = lookup(&pw, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1 << 20)) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (error != 0 || found == nullptr) return std::nullopt;
    return pw;
  }
}

std::optional<gid_t> LookUpGroup(const std::string& name) {
  std::vector<char> buffer(1024);
  while (true) {
    group gr;
    group* found = nullptr;
    const int error =
        getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1 << 20)) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (error != 0 || found == nullptr) return std::nullopt;
    return gr.gr_gid;
  }
}

std::vector<gid_t> GroupList(const char* user, gid_t gid) {
  int count = 32;
  std::vector<gid_t> groups(count);
  while (getgrouplist(user, gid, groups.data(), &count) < 0) {
    groups.resize(count);  // getgrouplist stored the size it needs
  }
  groups.resize(count);
  return groups;
}

}  // namespace

absl::StatusOr<std::optional<Credentials>> ResolveCredentials(
    const std::string& user, const std::string& group) {
  if (user.empty() && group.empty()) return std::nullopt;
  Credentials creds{.uid = geteuid(), .gid = getegid()};
  std::vector<char> buffer;
  std::optional<passwd> pw;
  if (!user.empty()) {
    uid_t uid = 0;
    if (absl::SimpleAtoi(user, &uid)) {
      pw = LookUpUser([uid](passwd* p, char* b, size_t n,
                            passwd** r) { return getpwuid_r(uid, p, b, n, r); },
                      buffer);
      if (!pw.has_value() && group.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "user ", uid, " has no passwd entry; name a group too"));
      }
    } else {
      pw = LookUpUser(
          [&user](passwd* p, char* b, size_t n, passwd** r) {
            return getpwnam_r(user.c_str(), p, b, n, r);
          },
          buffer);
      if (!pw.has_value()) {
        return absl::NotFoundError(
            absl::StrCat("user \"", user, "\": no such user"));
      }
      uid = pw->pw_uid;
    }
    creds.uid = uid;
    if (pw.has_value()) creds.gid = pw->pw_gid;
    creds.set_groups = true;
  }
  if (!group.empty()) {
    if (!absl::SimpleAtoi(group, &creds.gid)) {
      const std::optional<gid_t> gid = LookUpGroup(group);
      if (!gid.has_value()) {
        return absl::NotFoundError(
            absl::StrCat("group \"", group, "\": no such group"));
      }
      creds.gid = *gid;
    }
  }
  if (creds.uid == geteuid() && creds.gid == getegid()) return std::nullopt;
  if (geteuid() != 0) {
    std::string who;
    if (!user.empty()) absl::StrAppend(&who, "user \"", user, "\" ");
    if (!group.empty()) absl::StrAppend(&who, "group \"", group, "\" ");
    return absl::PermissionDeniedError(
        absl::StrCat(who, "(uid ", creds.uid, ", gid ", creds.gid,
                     "): switching users needs root; the daemon runs as uid ",
                     geteuid(), ", gid ", getegid()));
  }
  if (creds.set_groups) {
    creds.groups = pw.has_value() ? GroupList(pw->pw_name, creds.gid)
                                  : std::vector<gid_t>{creds.gid};
  }
  return creds;
}

absl::Status CheckWorkingDir(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  const std::string what = absl::StrCat("working_dir \"", dir, "\"");
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return absl::ErrnoToStatus(errno, what);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": not a directory"));
  }
  if (access(dir.c_str(), X_OK) != 0) return absl::ErrnoToStatus(errno, what);
  return absl::OkStatus();
}

absl::StatusOr<std::string> FindProgram(
    const std::string& name, const std::optional<std::string>& path_env,
    const std::string& working_dir) {
  if (name.empty()) {
    return absl::InvalidArgumentError("argv[0] is empty");
  }
  // What `candidate` names as the daemon sees it (the child resolves
  // relative names after its chdir).
  auto seen_from_daemon = [&working_dir](const std::string& candidate) {
    return candidate[0] == '/' || working_dir.empty()
               ? candidate
               : absl::StrCat(working_dir, "/", candidate);
  };
  // 0 = an executable regular file; otherwise the reason it is not.
  auto check = [&](const std::string& candidate) -> int {
    const std::string path = seen_from_daemon(candidate);
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode)) return EACCES;
    return access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (name.find('/') != std::string::npos) {
    const int error = check(name);
    if (error == 0) return name;
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat("command not found: \"", seen_from_daemon(name), "\""));
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "command \"", seen_from_daemon(name), "\" cannot be executed: ",
        error == EISDIR ? "is a directory" : strerror(error)));
  }
  const std::string path = path_env.value_or(kDefaultPath);
  std::string unusable;  // the first match that was not executable
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate =
        dir.empty() ? absl::StrCat("./", name) : absl::StrCat(dir, "/", name);
    const int error = check(candidate);
    if (error == 0) return candidate;
    if (error != ENOENT && error != ENOTDIR && unusable.empty()) {
      unusable = candidate;
    }
  }
  if (!unusable.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "command \"", name, "\": found \"", seen_from_daemon(unusable),
        "\" in PATH but cannot execute it (not an executable file)"));
  }
  return absl::NotFoundError(absl::StrCat("command not found: \"", name,
                                          "\" (searched PATH=", path, ")"));
}

}  // namespace chime::exec::shell_internal
