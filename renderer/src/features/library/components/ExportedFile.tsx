import type { LocalFile } from '../../../../../shared/ipc/index.ts';
import { formatBytes } from '../../../lib/format.ts';

/** A file an export wrote (a clip, a trimmed clip, a sequence): its type, size, path, and Open. */
export function ExportedFile({ file, label }: { file: LocalFile; label: string }) {
  return (
    <div className="notice notice-info" role="status" aria-label={label}>
      <span className="grow mono">
        {file.mime} · {formatBytes(file.bytes)}
        <br />
        {file.path}
      </span>
      <a className="btn btn-small" href={file.url} target="_blank" rel="noreferrer">
        Open
      </a>
    </div>
  );
}
