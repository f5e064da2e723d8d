import CEdit
#if canImport(Glibc)
import Glibc
#endif

/// The REPL's persistent history: `~/.bklua_history`, or `$BKLUA_HISTORY` (empty: no history),
/// keeping the last `limit` entries.
struct History {
    let path: String?
    let limit: Int32 = 1000

    init(environment: Bool) {
        if environment, let value = getenv("BKLUA_HISTORY") {
            let text = String(cString: value)
            path = text.isEmpty ? nil : text
        } else if let home = getenv("HOME"), home.pointee != 0 {
            path = String(cString: home) + "/.bklua_history"
        } else {
            path = nil
        }
    }

    func load() {
        cedit_history_load(path, limit)
    }

    /// Adds a chunk and saves the file at once, so a killed session keeps what it had.
    func add(_ entry: String) {
        guard !entry.isEmpty else { return }
        cedit_history_add(entry)
        if let path { _ = cedit_history_save(path) }
    }
}
