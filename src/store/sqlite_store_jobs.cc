// SqliteStore: jobs and fires.
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/job_codec.h"
#include "src/store/sqlite_schema.h"
#include "src/store/sqlite_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

#define CHIME_JOB_COLUMNS \
  "id, generation, revision, deleted, watermark, watermark_generation, spec"

absl::StatusOr<JobRecord> JobFromRow(const Stmt& s) {
  JobRecord job;
  job.id = s.Int(0);
  job.generation = s.Int(1);
  job.revision = s.Int(2);
  job.deleted = s.Int(3) != 0;
  job.watermark = NanosToTime(s.Int(4));
  job.watermark_generation = s.Int(5);
  absl::StatusOr<JobSpec> spec = DecodeJobSpec(s.Text(6));
  if (!spec.ok()) {
    return absl::DataLossError(
        absl::StrCat("job id ", job.id, ": ", spec.status().message()));
  }
  job.spec = *std::move(spec);
  return job;
}

absl::StatusOr<std::optional<JobRecord>> FindJob(Db& db, const JobKey& key) {
  ASSIGN_OR_RETURN(StmtRef stmt,
                   db.Prepare("SELECT " CHIME_JOB_COLUMNS
                              " FROM jobs WHERE namespace = ? AND name = ?"));
  ASSIGN_OR_RETURN(bool row,
                   stmt->Bind(1, key.name_space).Bind(2, key.id).Step());
  if (!row) return std::nullopt;
  ASSIGN_OR_RETURN(JobRecord job, JobFromRow(*stmt));
  return job;
}

absl::StatusOr<int64_t> NextRevision(Db& db) {
  ASSIGN_OR_RETURN(int64_t revision, GetMeta(db, "revision"));
  RETURN_IF_ERROR(SetMeta(db, "revision", revision + 1));
  return revision + 1;
}

StmtRef& BindFire(StmtRef& stmt, int first, const FireRef& fire) {
  stmt->Bind(first, fire.job)
      .Bind(first + 1, fire.generation)
      .Bind(first + 2, TimeToNanos(fire.scheduled_time))
      .Bind(first + 3, int64_t{fire.manual});
  return stmt;
}

constexpr char kFindClaim[] =
    "SELECT id, token FROM runs WHERE job_id = ? AND generation = ? AND "
    "scheduled = ? AND manual = ?";

// A claim's insert was refused with `refused`: OK if the same claim is stored
// (a re-send; the refused insert wrote nothing), AlreadyExists if its fire or
// its RunId belongs to another claim. Claims are inserted first and explained
// only when refused, which saves two lookups on every claim that is new.
absl::Status ExplainRefusedClaim(Db& db, const FireClaim& c,
                                 absl::Status refused) {
  if (!absl::IsAlreadyExists(refused)) return refused;
  {
    ASSIGN_OR_RETURN(StmtRef find, db.Prepare(kFindClaim));
    ASSIGN_OR_RETURN(bool row, BindFire(find, 1, c.fire)->Step());
    if (row) {
      const RunId claimed_by = static_cast<RunId>(find->Int(0));
      if (claimed_by == c.run) return absl::OkStatus();
      return ClaimConflictError(c.fire, claimed_by, c.run);
    }
  }
  ASSIGN_OR_RETURN(StmtRef other,
                   db.Prepare("SELECT job_id, generation, scheduled, "
                              "manual FROM runs WHERE id = ?"));
  ASSIGN_OR_RETURN(bool row,
                   other->Bind(1, static_cast<int64_t>(c.run)).Step());
  if (!row) return refused;
  const FireRef claimed{other->Int(0), other->Int(1),
                        NanosToTime(other->Int(2)), other->Int(3) != 0};
  return RunIdReusedError(c.run, claimed, c.fire);
}

}  // namespace

// --- Jobs ---

namespace {

// The store's revision counter within one write transaction: read once,
// advanced by each write that takes a revision, stored once at the end (one
// read and one write of `meta` a batch, not a pair a job).
class Revisions {
 public:
  // The revision the next write takes.
  absl::StatusOr<int64_t> Next(Db& db) {
    if (!loaded_) {
      ASSIGN_OR_RETURN(last_, GetMeta(db, "revision"));
      stored_ = last_;
      loaded_ = true;
    }
    return last_ + 1;
  }
  // The write that asked Next() took it.
  void Took() { ++last_; }
  absl::Status Store(Db& db) {
    return last_ == stored_ ? absl::OkStatus() : SetMeta(db, "revision", last_);
  }

 private:
  bool loaded_ = false;
  int64_t last_ = 0;
  int64_t stored_ = 0;
};

// Writes `w` over `existing` (null: no row of its name) as PlanJobPut says;
// the record as stored. A new row's insert is AlreadyExists if the name is
// taken after all (a caller that skipped the lookup finds out so).
absl::StatusOr<JobRecord> WriteJob(Db& db, const JobWrite& w,
                                   std::optional<JobRecord> existing,
                                   Revisions& revisions) {
  ASSIGN_OR_RETURN(JobPutPlan plan,
                   PlanJobPut(existing ? &*existing : nullptr, w));
  if (!plan.write) return *std::move(existing);
  JobRecord job = existing ? *std::move(existing) : JobRecord{};
  ApplyJobPut(plan, w, &job);
  ASSIGN_OR_RETURN(job.revision, revisions.Next(db));
  const std::string spec = EncodeJobSpec(w.spec);
  if (job.id != 0) {
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("UPDATE jobs SET generation = ?, "
                                "revision = ?, deleted = 0, spec = ? "
                                "WHERE id = ?"));
    RETURN_IF_ERROR(stmt->Bind(1, job.generation)
                        .Bind(2, job.revision)
                        .BindBlob(3, spec)
                        .Bind(4, job.id)
                        .Run());
    if (plan.start_watermark) {
      ASSIGN_OR_RETURN(StmtRef mark,
                       db.Prepare("UPDATE jobs SET watermark = ?, "
                                  "watermark_generation = ? WHERE id = ?"));
      RETURN_IF_ERROR(mark->Bind(1, TimeToNanos(job.watermark))
                          .Bind(2, job.watermark_generation)
                          .Bind(3, job.id)
                          .Run());
    }
  } else {
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("INSERT INTO jobs (namespace, name, generation, "
                   "revision, deleted, watermark, watermark_generation, "
                   "spec) VALUES (?, ?, ?, ?, 0, ?, ?, ?)"));
    // Not RETURNING id: its temporary table was a fifth of a creation's
    // insert (bench/RESULTS.md).
    RETURN_IF_ERROR(stmt->Bind(1, w.spec.key.name_space)
                        .Bind(2, w.spec.key.id)
                        .Bind(3, job.generation)
                        .Bind(4, job.revision)
                        .Bind(5, TimeToNanos(job.watermark))
                        .Bind(6, job.watermark_generation)
                        .BindBlob(7, spec)
                        .Run());
    job.id = db.LastInsertRowid();
  }
  revisions.Took();
  return job;
}

}  // namespace

absl::StatusOr<std::vector<JobRecord>> SqliteStore::PutJobs(
    absl::Span<const JobWrite> writes, MonoTime deadline) {
  RETURN_IF_ERROR(ValidateJobWrites(writes));
  std::vector<JobRecord> out;
  RETURN_IF_ERROR(Write(deadline, [&](Db& db) -> absl::Status {
    out.clear();
    Revisions revisions;
    for (const JobWrite& w : writes) {
      if (w.create_only) {
        // A creation is inserted first and looked up only when its name is
        // taken (a live job: refused; a deleted one's row: taken over), as
        // claims are: the lookup is saved on every new job. The refused
        // insert wrote nothing (SQLite undoes just the statement).
        absl::StatusOr<JobRecord> created =
            WriteJob(db, w, std::nullopt, revisions);
        if (!absl::IsAlreadyExists(created.status())) {
          if (!created.ok()) return created.status();
          out.push_back(*std::move(created));
          continue;
        }
      }
      ASSIGN_OR_RETURN(std::optional<JobRecord> existing,
                       FindJob(db, w.spec.key));
      ASSIGN_OR_RETURN(JobRecord job,
                       WriteJob(db, w, std::move(existing), revisions));
      out.push_back(std::move(job));
    }
    return revisions.Store(db);
  }));
  return out;
}

absl::Status SqliteStore::DeleteJob(const JobKey& key,
                                    int64_t expected_revision,
                                    MonoTime deadline) {
  return Write(deadline, [&](Db& db) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(db, key));
    ASSIGN_OR_RETURN(bool write, PlanJobDelete(job ? &*job : nullptr, key,
                                               expected_revision));
    if (!write) return absl::OkStatus();
    ASSIGN_OR_RETURN(int64_t revision, NextRevision(db));
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("UPDATE jobs SET deleted = 1, revision = ? WHERE id = ?"));
    return stmt->Bind(1, revision).Bind(2, job->id).Run();
  });
}

absl::StatusOr<JobRecord> SqliteStore::GetJob(const JobKey& key,
                                              MonoTime deadline) {
  JobRecord out;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(db, key));
    if (!job || job->deleted) {
      return JobNotFoundError(key);
    }
    out = *std::move(job);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<JobPage> SqliteStore::LoadJobs(JobId after, int limit,
                                              MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobPage page;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    page = JobPage{};
    page.next_after = after;
    ASSIGN_OR_RETURN(page.revision, GetMeta(db, "revision"));
    ASSIGN_OR_RETURN(StmtRef stmt,
                     db.Prepare("SELECT " CHIME_JOB_COLUMNS
                                " FROM jobs WHERE id > ? AND deleted = 0 "
                                "ORDER BY id LIMIT ?"));
    stmt->Bind(1, after).Bind(2, int64_t{limit} + 1);
    page.done = true;
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      if (static_cast<int>(page.jobs.size()) == limit) {
        page.done = false;
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(*stmt));
      page.next_after = job.id;
      page.jobs.push_back(std::move(job));
    }
  }));
  return page;
}

absl::StatusOr<JobChanges> SqliteStore::JobChangesSince(int64_t revision,
                                                        int limit,
                                                        MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobChanges out;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    out = JobChanges{};
    ASSIGN_OR_RETURN(int64_t current, GetMeta(db, "revision"));
    out.revision = std::max(revision, current);
    ASSIGN_OR_RETURN(StmtRef stmt, db.Prepare("SELECT " CHIME_JOB_COLUMNS
                                              " FROM jobs WHERE revision > ? "
                                              "ORDER BY revision LIMIT ?"));
    stmt->Bind(1, revision).Bind(2, int64_t{limit} + 1);
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      if (static_cast<int>(out.changes.size()) == limit) {
        out.revision = out.changes.back().revision;
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(*stmt));
      out.changes.push_back(std::move(job));
    }
  }));
  return out;
}

// --- Fires ---

absl::Status SqliteStore::ClaimFires(const Fence& fence,
                                     const ClaimBatch& batch,
                                     MonoTime deadline) {
  RETURN_IF_ERROR(ValidateClaimBatch(batch));
  return Write(deadline, [&](Db& db) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(db, fence));
    absl::flat_hash_set<JobId> known;
    auto check_job = [&](JobId job) -> absl::Status {
      if (known.contains(job)) return absl::OkStatus();
      ASSIGN_OR_RETURN(StmtRef stmt,
                       db.Prepare("SELECT 1 FROM jobs WHERE id = ?"));
      ASSIGN_OR_RETURN(bool row, stmt->Bind(1, job).Step());
      if (!row) {
        return UnknownJobIdError(job);
      }
      known.insert(job);
      return absl::OkStatus();
    };
    // The savepoint makes the batch all or nothing: an error below rolls
    // back the claims already inserted.
    for (const FireClaim& c : batch.claims) {
      RETURN_IF_ERROR(check_job(c.fire.job));
      absl::Status inserted;
      {
        ASSIGN_OR_RETURN(StmtRef insert,
                         db.Prepare("INSERT INTO runs VALUES "
                                    "(?, ?, ?, ?, ?, ?, 0, ?, ?, ?, '', ?)"));
        insert->Bind(1, static_cast<int64_t>(c.run));
        BindFire(insert, 2, c.fire)
            ->Bind(6, static_cast<int64_t>(RunState::kPending))
            .Bind(7, fence.token)
            .Bind(8, TimeToNanos(batch.at))
            .Bind(9, TimeToNanos(batch.at))
            .Bind(10, kRunBaseBytes);
        inserted = insert->Run();
      }
      if (!inserted.ok()) RETURN_IF_ERROR(ExplainRefusedClaim(db, c, inserted));
    }
    for (const MissedRecord& m : batch.missed) {
      RETURN_IF_ERROR(check_job(m.job));
      ASSIGN_OR_RETURN(StmtRef stmt,
                       db.Prepare("INSERT OR IGNORE INTO missed VALUES "
                                  "(?, ?, ?, ?, ?, ?, ?)"));
      RETURN_IF_ERROR(stmt->Bind(1, m.job)
                          .Bind(2, TimeToNanos(m.first))
                          .Bind(3, static_cast<int64_t>(m.reason))
                          .Bind(4, m.generation)
                          .Bind(5, TimeToNanos(m.last))
                          .Bind(6, m.count)
                          .Bind(7, int64_t{m.count_capped})
                          .Run());
    }
    for (size_t i = 0; i < batch.watermarks.size(); ++i) {
      const WatermarkAdvance& w = batch.watermarks[i];
      int64_t generation = 0;
      int64_t watermark_generation = 0;
      absl::Time watermark;
      {
        ASSIGN_OR_RETURN(StmtRef stmt,
                         db.Prepare("SELECT generation, watermark_generation, "
                                    "watermark FROM jobs WHERE id = ?"));
        ASSIGN_OR_RETURN(bool row, stmt->Bind(1, w.job).Step());
        if (!row) {
          return UnknownJobIdError(w.job);
        }
        generation = stmt->Int(0);
        watermark_generation = stmt->Int(1);
        watermark = NanosToTime(stmt->Int(2));
      }
      RETURN_IF_ERROR(CheckWatermarkAdvance(i, w, generation));
      if (!AdvanceWatermark(w, &watermark_generation, &watermark)) continue;
      ASSIGN_OR_RETURN(StmtRef stmt,
                       db.Prepare("UPDATE jobs SET watermark_generation = ?, "
                                  "watermark = ? WHERE id = ?"));
      RETURN_IF_ERROR(stmt->Bind(1, watermark_generation)
                          .Bind(2, TimeToNanos(watermark))
                          .Bind(3, w.job)
                          .Run());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<ClaimInfo>> SqliteStore::LookupClaims(
    absl::Span<const FireRef> fires, MonoTime deadline) {
  std::vector<ClaimInfo> out;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    out.clear();
    for (const FireRef& f : fires) {
      ASSIGN_OR_RETURN(StmtRef find, db.Prepare(kFindClaim));
      ASSIGN_OR_RETURN(bool row, BindFire(find, 1, f)->Step());
      out.push_back(
          row ? ClaimInfo{static_cast<RunId>(find->Int(0)), find->Int(1)}
              : ClaimInfo{});
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<MissedPage> SqliteStore::ListMissed(
    JobId job, const std::optional<MissedCursor>& after, int limit,
    MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  MissedPage page;
  RETURN_IF_ERROR(Read(deadline, [&](Db& db) -> absl::Status {
    page = MissedPage{};
    // Row values compare lexicographically: everything after the cursor.
    ASSIGN_OR_RETURN(
        StmtRef stmt,
        db.Prepare("SELECT first, reason, generation, last, count, capped "
                   "FROM missed WHERE job_id = ? AND "
                   "(first, reason, generation) > (?, ?, ?) "
                   "ORDER BY first, reason, generation LIMIT ?"));
    const MissedCursor start =
        after ? *after : MissedCursor{absl::InfinitePast(), MissReason{}, -1};
    stmt->Bind(1, job);
    stmt->Bind(2, TimeToNanos(start.first));
    stmt->Bind(3, static_cast<int64_t>(start.reason));
    stmt->Bind(4, start.generation);
    stmt->Bind(5, int64_t{limit} + 1);
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) return absl::OkStatus();
      if (static_cast<int>(page.records.size()) == limit) {
        const MissedRecord& last = page.records.back();
        page.next = MissedCursor{last.first, last.reason, last.generation};
        return absl::OkStatus();
      }
      page.records.push_back(MissedRecord{
          job, stmt->Int(2), NanosToTime(stmt->Int(0)),
          NanosToTime(stmt->Int(3)), stmt->Int(4), stmt->Int(5) != 0,
          static_cast<MissReason>(stmt->Int(1))});
    }
  }));
  return page;
}

}  // namespace chime::store
