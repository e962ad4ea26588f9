import { AppError } from "@3ngram/errors";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** Wire timestamp → ISO-8601 string. A required timestamp that is missing is a peer bug, not a caller fault. */
export function isoTime(ts: Timestamp | undefined, what: string): string {
  if (ts === undefined) throw new AppError("internal_error", `peer response lacks ${what}`);
  return timestampDate(ts).toISOString();
}

export function isoTimeOrNull(ts: Timestamp | undefined): string | null {
  return ts === undefined ? null : timestampDate(ts).toISOString();
}
