// PostgresStore: jobs and fires.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/base/status_macros.h"
#include "src/store/job_codec.h"
#include "src/store/postgres_store.h"
#include "src/store/store_util.h"

namespace chime::store {
namespace {

#define CHIME_JOB_COLUMNS \
  "id, generation, revision, deleted, watermark, watermark_generation, spec"

absl::StatusOr<JobRecord> JobFromRow(const PgResult& r, int row) {
  JobRecord job;
  job.id = r.Int(row, 0);
  job.generation = r.Int(row, 1);
  job.revision = r.Int(row, 2);
  job.deleted = r.Bool(row, 3);
  job.watermark = NanosToTime(r.Int(row, 4));
  job.watermark_generation = r.Int(row, 5);
  absl::StatusOr<JobSpec> spec = DecodeJobSpec(r.Bytes(row, 6));
  if (!spec.ok()) {
    return absl::DataLossError(
        absl::StrCat("job id ", job.id, ": ", spec.status().message()));
  }
  job.spec = *std::move(spec);
  return job;
}

absl::StatusOr<std::optional<JobRecord>> FindJob(PgTx& tx, const JobKey& key) {
  ASSIGN_OR_RETURN(PgResult r,
                   tx.Run("SELECT " CHIME_JOB_COLUMNS
                          " FROM jobs WHERE namespace = $1 AND name = $2",
                          {key.name_space, key.id}));
  if (r.rows() == 0) return std::nullopt;
  ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, 0));
  return job;
}

// Job writers are serialized on the revision counter's row (as SQLite's one
// writer is): a job's revision is then also the order its change commits in,
// which the change feed relies on. Returns the current revision.
absl::StatusOr<int64_t> LockRevision(PgTx& tx) {
  ASSIGN_OR_RETURN(
      PgResult r,
      tx.Run("SELECT value FROM meta WHERE key = 'revision' FOR UPDATE"));
  if (r.rows() != 1) {
    return absl::DataLossError("postgres: meta row \"revision\" is missing");
  }
  return r.Int(0, 0);
}

absl::Status SaveRevision(PgTx& tx, int64_t revision) {
  return tx
      .Run("UPDATE meta SET value = $1::bigint WHERE key = 'revision'",
           {revision})
      .status();
}

std::vector<PgParam> FireParams(const FireRef& fire) {
  return {fire.job, fire.generation, TimeToNanos(fire.scheduled_time),
          fire.manual ? "true" : "false"};
}

constexpr char kFindClaim[] =
    "SELECT id, token FROM runs WHERE job_id = $1::bigint AND "
    "generation = $2::bigint AND scheduled = $3::bigint AND "
    "manual = $4::boolean";

// A claim's insert wrote nothing (ON CONFLICT DO NOTHING): OK if the same
// claim is stored (a re-send), AlreadyExists if its fire or its RunId belongs
// to another claim.
absl::Status ExplainRefusedClaim(PgTx& tx, const FireClaim& c) {
  ASSIGN_OR_RETURN(PgResult find, tx.Run(kFindClaim, FireParams(c.fire)));
  if (find.rows() == 1) {
    const RunId claimed_by = static_cast<RunId>(find.Int(0, 0));
    if (claimed_by == c.run) return absl::OkStatus();
    return ClaimConflictError(c.fire, claimed_by, c.run);
  }
  ASSIGN_OR_RETURN(PgResult other,
                   tx.Run("SELECT job_id, generation, scheduled, manual "
                          "FROM runs WHERE id = $1::bigint",
                          {static_cast<int64_t>(c.run)}));
  if (other.rows() != 1) {
    return absl::UnavailableError(absl::StrCat(
        "claim of run ", c.run, " conflicted with a claim rolled back since"));
  }
  const FireRef claimed{other.Int(0, 0), other.Int(0, 1),
                        NanosToTime(other.Int(0, 2)), other.Bool(0, 3)};
  return RunIdReusedError(c.run, claimed, c.fire);
}

}  // namespace

// --- Jobs ---

absl::StatusOr<std::vector<JobRecord>> PostgresStore::PutJobs(
    absl::Span<const JobWrite> writes, MonoTime deadline) {
  RETURN_IF_ERROR(ValidateJobWrites(writes));
  std::vector<JobRecord> out;
  RETURN_IF_ERROR(Write(deadline, [&](PgTx& tx) -> absl::Status {
    out.clear();
    ASSIGN_OR_RETURN(int64_t revision, LockRevision(tx));
    const int64_t first_revision = revision;
    for (const JobWrite& w : writes) {
      ASSIGN_OR_RETURN(std::optional<JobRecord> existing,
                       FindJob(tx, w.spec.key));
      ASSIGN_OR_RETURN(JobPutPlan plan,
                       PlanJobPut(existing ? &*existing : nullptr, w));
      if (!plan.write) {
        out.push_back(*std::move(existing));
        continue;
      }
      JobRecord job = existing ? *std::move(existing) : JobRecord{};
      job.spec = w.spec;
      job.generation = plan.generation;
      job.deleted = false;
      job.revision = ++revision;
      const PgParam spec = PgParam::Bytes(EncodeJobSpec(w.spec));
      if (job.id != 0) {
        RETURN_IF_ERROR(tx.Run("UPDATE jobs SET generation = $1::bigint, "
                               "revision = $2::bigint, deleted = false, "
                               "spec = $3 WHERE id = $4::bigint",
                               {job.generation, job.revision, spec, job.id})
                            .status());
      } else {
        ASSIGN_OR_RETURN(
            PgResult r,
            tx.Run("INSERT INTO jobs (namespace, name, generation, revision, "
                   "deleted, watermark, watermark_generation, spec) VALUES "
                   "($1, $2, $3::bigint, $4::bigint, false, $5::bigint, "
                   "$6::bigint, $7) RETURNING id",
                   {w.spec.key.name_space, w.spec.key.id, job.generation,
                    job.revision, TimeToNanos(job.watermark),
                    job.watermark_generation, spec}));
        job.id = r.Int(0, 0);
      }
      out.push_back(std::move(job));
    }
    if (revision == first_revision) return absl::OkStatus();
    return SaveRevision(tx, revision);
  }));
  return out;
}

absl::Status PostgresStore::DeleteJob(const JobKey& key,
                                      int64_t expected_revision,
                                      MonoTime deadline) {
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t revision, LockRevision(tx));
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(tx, key));
    ASSIGN_OR_RETURN(bool write, PlanJobDelete(job ? &*job : nullptr, key,
                                               expected_revision));
    if (!write) return absl::OkStatus();
    RETURN_IF_ERROR(SaveRevision(tx, revision + 1));
    return tx
        .Run(
            "UPDATE jobs SET deleted = true, revision = $1::bigint "
            "WHERE id = $2::bigint",
            {revision + 1, job->id})
        .status();
  });
}

absl::StatusOr<JobRecord> PostgresStore::GetJob(const JobKey& key,
                                                MonoTime deadline) {
  JobRecord out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<JobRecord> job, FindJob(tx, key));
    if (!job || job->deleted) {
      return JobNotFoundError(key);
    }
    out = *std::move(job);
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<JobPage> PostgresStore::LoadJobs(JobId after, int limit,
                                                MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobPage page;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    page = JobPage{};
    page.next_after = after;
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run("SELECT " CHIME_JOB_COLUMNS
               ", (SELECT value FROM meta WHERE key = 'revision') FROM jobs "
               "WHERE id > $1::bigint AND NOT deleted ORDER BY id LIMIT $2",
               {after, int64_t{limit} + 1}));
    page.done = r.rows() <= limit;
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, i));
      page.next_after = job.id;
      page.jobs.push_back(std::move(job));
    }
    if (r.rows() > 0) {
      page.revision = r.Int(0, 7);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(PgResult rev,
                     tx.Run("SELECT value FROM meta WHERE key = 'revision'"));
    page.revision = rev.Int(0, 0);
    return absl::OkStatus();
  }));
  return page;
}

absl::StatusOr<JobChanges> PostgresStore::JobChangesSince(int64_t revision,
                                                          int limit,
                                                          MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  JobChanges out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out = JobChanges{};
    ASSIGN_OR_RETURN(PgResult rev,
                     tx.Run("SELECT value FROM meta WHERE key = 'revision'"));
    out.revision = std::max(revision, rev.Int(0, 0));
    ASSIGN_OR_RETURN(PgResult r,
                     tx.Run("SELECT " CHIME_JOB_COLUMNS
                            " FROM jobs WHERE revision > $1::bigint "
                            "ORDER BY revision LIMIT $2",
                            {revision, int64_t{limit} + 1}));
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      ASSIGN_OR_RETURN(JobRecord job, JobFromRow(r, i));
      out.changes.push_back(std::move(job));
    }
    if (r.rows() > limit) out.revision = out.changes.back().revision;
    return absl::OkStatus();
  }));
  return out;
}

// --- Fires ---

absl::Status PostgresStore::ClaimFires(const Fence& fence,
                                       const ClaimBatch& batch,
                                       MonoTime deadline) {
  RETURN_IF_ERROR(ValidateClaimBatch(batch));
  return Write(deadline, [&](PgTx& tx) -> absl::Status {
    RETURN_IF_ERROR(CheckFence(tx, fence));
    absl::flat_hash_set<JobId> known;
    auto check_job = [&](JobId job) -> absl::Status {
      if (known.contains(job)) return absl::OkStatus();
      ASSIGN_OR_RETURN(
          PgResult r,
          tx.Run("SELECT 1 FROM jobs WHERE id = $1::bigint", {job}));
      if (r.rows() == 0) {
        return UnknownJobIdError(job);
      }
      known.insert(job);
      return absl::OkStatus();
    };
    // Any error rolls back the whole transaction: all or nothing.
    for (const FireClaim& c : batch.claims) {
      RETURN_IF_ERROR(check_job(c.fire.job));
      std::vector<PgParam> params = FireParams(c.fire);
      params.insert(params.end(), {static_cast<int64_t>(c.run), fence.token,
                                   TimeToNanos(batch.at), kRunBaseBytes,
                                   static_cast<int64_t>(RunState::kPending)});
      ASSIGN_OR_RETURN(
          PgResult r, tx.Run("INSERT INTO runs VALUES ($5::bigint, $1::bigint, "
                             "$2::bigint, $3::bigint, $4::boolean, "
                             "$9::smallint, 0, $6::bigint, "
                             "$7::bigint, $7::bigint, ''::bytea, $8::bigint) "
                             "ON CONFLICT DO NOTHING",
                             params));
      if (r.affected() == 0) RETURN_IF_ERROR(ExplainRefusedClaim(tx, c));
    }
    for (const MissedRecord& m : batch.missed) {
      RETURN_IF_ERROR(check_job(m.job));
      RETURN_IF_ERROR(
          tx.Run("INSERT INTO missed VALUES ($1::bigint, $2::bigint, "
                 "$3::smallint, $4::bigint, $5::bigint, $6::bigint, "
                 "$7::boolean) ON CONFLICT DO NOTHING",
                 {m.job, TimeToNanos(m.first), static_cast<int64_t>(m.reason),
                  m.generation, TimeToNanos(m.last), m.count,
                  m.count_capped ? "true" : "false"})
              .status());
    }
    for (size_t i = 0; i < batch.watermarks.size(); ++i) {
      const WatermarkAdvance& w = batch.watermarks[i];
      ASSIGN_OR_RETURN(PgResult r,
                       tx.Run("SELECT generation, watermark_generation, "
                              "watermark FROM jobs WHERE id = $1::bigint "
                              "FOR UPDATE",
                              {w.job}));
      if (r.rows() == 0) {
        return UnknownJobIdError(w.job);
      }
      int64_t watermark_generation = r.Int(0, 1);
      absl::Time watermark = NanosToTime(r.Int(0, 2));
      RETURN_IF_ERROR(CheckWatermarkAdvance(i, w, r.Int(0, 0)));
      if (!AdvanceWatermark(w, &watermark_generation, &watermark)) continue;
      RETURN_IF_ERROR(
          tx.Run("UPDATE jobs SET watermark_generation = "
                 "$1::bigint, watermark = $2::bigint "
                 "WHERE id = $3::bigint",
                 {watermark_generation, TimeToNanos(watermark), w.job})
              .status());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<ClaimInfo>> PostgresStore::LookupClaims(
    absl::Span<const FireRef> fires, MonoTime deadline) {
  std::vector<ClaimInfo> out;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    out.clear();
    for (const FireRef& f : fires) {
      ASSIGN_OR_RETURN(PgResult r, tx.Run(kFindClaim, FireParams(f)));
      out.push_back(r.rows() == 1 ? ClaimInfo{static_cast<RunId>(r.Int(0, 0)),
                                              r.Int(0, 1)}
                                  : ClaimInfo{});
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<MissedPage> PostgresStore::ListMissed(
    JobId job, const std::optional<MissedCursor>& after, int limit,
    MonoTime deadline) {
  RETURN_IF_ERROR(ValidateLimit(limit));
  MissedPage page;
  RETURN_IF_ERROR(Read(deadline, [&](PgTx& tx) -> absl::Status {
    page = MissedPage{};
    const MissedCursor start =
        after ? *after : MissedCursor{absl::InfinitePast(), MissReason{}, -1};
    // Row values compare lexicographically: everything after the cursor.
    ASSIGN_OR_RETURN(
        PgResult r,
        tx.Run(
            "SELECT first, reason, generation, last, count, capped "
            "FROM missed WHERE job_id = $1::bigint AND "
            "(first, reason, generation) > ($2::bigint, $3::smallint, "
            "$4::bigint) ORDER BY first, reason, generation LIMIT $5",
            {job, TimeToNanos(start.first), static_cast<int64_t>(start.reason),
             start.generation, int64_t{limit} + 1}));
    for (int i = 0; i < std::min(r.rows(), limit); ++i) {
      page.records.push_back(MissedRecord{
          job, r.Int(i, 2), NanosToTime(r.Int(i, 0)), NanosToTime(r.Int(i, 3)),
          r.Int(i, 4), r.Bool(i, 5), static_cast<MissReason>(r.Int(i, 1))});
    }
    if (r.rows() > limit) {
      const MissedRecord& last = page.records.back();
      page.next = MissedCursor{last.first, last.reason, last.generation};
    }
    return absl::OkStatus();
  }));
  return page;
}

}  // namespace chime::store
