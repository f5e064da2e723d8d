#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Associated objects for any Swift class instance (what `objc_setAssociatedObject` gives NSObject).
///
/// A process-wide table keyed by `ObjectIdentifier`, each entry holding a weak reference to its
/// object: an association never keeps the object alive, and an entry whose object is gone is never
/// read again (even if a new object reuses the address). Values of a deallocated object are released
/// when the table next sweeps (each time it has doubled since the last sweep), or at once by
/// `removeAllAssociatedObjects`. Thread-safe (a mutex), so every variant is "atomic".
public enum AssociatedObjects {
    /// How a value is held.
    public enum Policy: Sendable {
        /// A strong reference (a copy for value types).
        case strong
        /// `AssociatedCopying` values are stored as `associatedCopy()`; others as `.strong`.
        case copy
    }

    /// Associates `value` with `object` under `key`; nil removes the association.
    public static func associate(_ value: Any?, with object: AnyObject, key: AnyHashable, policy: Policy = .strong) {
        var stored = value
        if policy == .copy, let copying = value as? any AssociatedCopying { stored = copying.associatedCopy() }
        store.set(stored.map { Slot.strong($0) }, object: object, key: key)
    }

    /// Associates `value` weakly: reading gives nil once `value` is deallocated.
    public static func associateWeakly(_ value: AnyObject?, with object: AnyObject, key: AnyHashable) {
        store.set(value.map { Slot.weak(WeakReference($0)) }, object: object, key: key)
    }

    /// The value associated with `object` under `key`, if any (nil for a weak value that is gone).
    public static func value(for object: AnyObject, key: AnyHashable) -> Any? {
        store.get(object: object, key: key)
    }

    /// Removes every association of `object`.
    public static func removeAll(from object: AnyObject) {
        store.removeAll(object: object)
    }

    /// Releases now the values of objects that have been deallocated (done automatically as the
    /// table grows).
    public static func sweep() {
        store.sweep()
    }

    /// Entries currently held (live or awaiting a sweep); for tests.
    static var entryCount: Int { store.count }

    static let store = AssociationStore()
}

/// A value that makes its own copy for `AssociatedObjects.Policy.copy` (what NSCopying does).
public protocol AssociatedCopying {
    func associatedCopy() -> Self
}

final class WeakReference: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

enum Slot: @unchecked Sendable {
    case strong(Any)
    case weak(WeakReference)

    var value: Any? {
        switch self {
        case .strong(let value): value
        case .weak(let reference): reference.object
        }
    }
}

/// The mutex-protected table behind `AssociatedObjects`.
final class AssociationStore: @unchecked Sendable {
    private struct Entry {
        weak var owner: AnyObject?
        var values: [AnyHashable: Slot]
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        var sweepAt = 64
    }

    private var state = Table()
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the table with the mutex held.
    private func withTable<R>(_ body: (inout Table) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&state)
    }

    func set(_ slot: Slot?, object: AnyObject, key: AnyHashable) {
        let id = ObjectIdentifier(object)
        // Released outside the lock: a value's deinit may use associations itself.
        let released: [Slot] = withTable { table in
            var dropped: [Slot] = []
            if let entry = table.entries[id], entry.owner !== object {
                dropped.append(contentsOf: entry.values.values)  // a dead object's, same address
                table.entries[id] = nil
            }
            if let slot {
                if table.entries[id] == nil { table.entries[id] = Entry(owner: object, values: [:]) }
                if let old = table.entries[id]?.values.updateValue(slot, forKey: key) { dropped.append(old) }
            } else if let old = table.entries[id]?.values.removeValue(forKey: key) {
                dropped.append(old)
            }
            if table.entries.count >= table.sweepAt { dropped.append(contentsOf: Self.sweep(&table)) }
            return dropped
        }
        _ = released
    }

    func sweep() {
        let released = withTable { Self.sweep(&$0) }
        _ = released
    }

    /// Removes the entries of deallocated objects; returns their values (to release unlocked).
    private static func sweep(_ table: inout Table) -> [Slot] {
        var dropped: [Slot] = []
        for (key, entry) in table.entries where entry.owner == nil {
            dropped.append(contentsOf: entry.values.values)
            table.entries[key] = nil
        }
        table.sweepAt = max(64, table.entries.count * 2)
        return dropped
    }

    func get(object: AnyObject, key: AnyHashable) -> Any? {
        let id = ObjectIdentifier(object)
        let slot: Slot? = withTable { table in
            guard let entry = table.entries[id], entry.owner === object else { return nil }
            return entry.values[key]
        }
        return slot?.value
    }

    func removeAll(object: AnyObject) {
        let id = ObjectIdentifier(object)
        let released: Entry? = withTable { table in
            table.entries.removeValue(forKey: id)
        }
        _ = released
    }

    var count: Int { withTable { $0.entries.count } }
}
