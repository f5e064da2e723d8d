/// UIControl+BlocksKit for Lua: block handlers for named events on any table or bridged object.
///
/// Handlers live in the registry table `bk.events` (weak keys: `obj -> {entry, ...}`, each entry
/// `{handler = f, events = {name = true}}`), so registering handlers never keeps `obj` alive and a
/// handler may capture its object. `sendActionsForControlEvents` has a caller, but like UIKit's
/// target-action it reports a failing handler (through `bk.onError`) and runs the others. It calls
/// the handlers from Lua (`EventDispatch.lua`), so that a handler may suspend the calling task.
extension BKLibrary {
    public static let eventHandlers = BKLibrary(name: "EventHandlers", functions: [
        // addEventHandler(obj, f, events)
        BKFunction("addEventHandler") { stack throws(LuaRaise) in
            try EventHandlerStore.checkObject(stack)
            try stack.checkFunction(2)
            if stack.type(at: 3) == .none { throw .type(3, expected: "string or table") }
            stack.top = 3
            guard try EventNames.pushSet(stack, at: 3) > 0 else { throw .argument(3, "no events given") }
            let events = stack.top
            let list = EventHandlerStore.pushHandlers(stack, create: true)
            stack.pushNewTable(recordCount: 2)
            stack.pushCopy(of: 2)
            stack.rawSet(-2, field: "handler")
            stack.pushCopy(of: events)
            stack.rawSet(-2, field: "events")
            stack.rawSet(list, stack.rawLength(list) + 1)
            return 0
        },
        // removeEventHandlersForControlEvents(obj [, events]): without events, every handler.
        BKFunction("removeEventHandlersForControlEvents") { stack throws(LuaRaise) in
            try EventHandlerStore.checkObject(stack)
            stack.top = 2
            let all = stack.isNoneOrNil(2)
            if !all { try EventNames.pushSet(stack, at: 2) }
            let events = stack.top
            let list = EventHandlerStore.pushHandlers(stack, create: false)
            guard stack.type(at: list) == .table else { return 0 }
            // Drops the events from every entry; entries left with none go (the list is compacted).
            let count = stack.rawLength(list)
            var kept: Int64 = 0
            for i in stride(from: 1, through: count, by: 1) {
                stack.rawGet(list, i)
                let entry = stack.top
                stack.rawGet(entry, field: "events")
                let entryEvents = stack.top
                if !all {
                    stack.pushNil()
                    while stack.next(events) {
                        stack.pop()
                        stack.pushCopy(of: -1)
                        stack.pushNil()
                        stack.rawSet(entryEvents)
                    }
                }
                stack.pushNil()
                let keep = !all && stack.next(entryEvents)
                stack.top = entry
                if keep {
                    kept += 1
                    stack.rawSet(list, kept)
                } else {
                    stack.pop()
                }
            }
            for i in stride(from: count, to: kept, by: -1) {
                stack.pushNil()
                stack.rawSet(list, i)
            }
            return 0
        },
        // hasEventHandlersForControlEvents(obj, events)
        BKFunction("hasEventHandlersForControlEvents") { stack throws(LuaRaise) in
            try EventHandlerStore.checkObject(stack)
            stack.top = 2
            try EventNames.pushSet(stack, at: 2)
            let events = stack.top
            let list = EventHandlerStore.pushHandlers(stack, create: false)
            var found = false
            if stack.type(at: list) == .table {
                let count = stack.rawLength(list)
                for i in stride(from: 1, through: count, by: 1) where !found {
                    stack.rawGet(list, i)
                    found = EventHandlerStore.entryMatches(stack, entry: stack.top, events: events)
                    stack.pop()
                }
            }
            stack.push(found)
            return 1
        },
        // sendActionsForControlEvents(obj, events, ...): f(obj, ...) for every handler registered
        // for any of the events, each once, in registration order; returns how many ran cleanly.
        BKFunction("sendActionsForControlEvents") { stack throws(LuaRaise) in
            try EventHandlerStore.checkObject(stack)
            try EventNames.pushSet(stack, at: 2)
            let arguments = stack.top - 3
            let events = stack.top
            let list = EventHandlerStore.pushHandlers(stack, create: false)
            guard stack.type(at: list) == .table else {
                stack.push(0)
                return 1
            }
            // A snapshot first: handlers may add or remove handlers while they run.
            stack.pushNewTable()
            let due = stack.top
            var dueCount: Int64 = 0
            let count = stack.rawLength(list)
            for i in stride(from: 1, through: count, by: 1) {
                stack.rawGet(list, i)
                if EventHandlerStore.entryMatches(stack, entry: stack.top, events: events) {
                    stack.rawGet(-1, field: "handler")
                    dueCount += 1
                    stack.rawSet(due, dueCount)
                }
                stack.pop()
            }
            // The calls are Lua's, made once this Swift frame is gone: a handler called from a
            // task may suspend it (rule 3). Without the base library, they are made from here.
            guard stack.ensureSpace(arguments + 8) else { throw .message("stack overflow") }
            if EventDispatch.push(on: stack) {
                stack.pushCopy(of: due)
                stack.push(dueCount)
                stack.pushCopy(of: 1)
                for argument in 0 ..< arguments { stack.pushCopy(of: 3 + argument) }
                return stack.continueWithCall(arguments: arguments + 3)
            }
            var succeeded = 0
            for i in stride(from: 1, through: dueCount, by: 1) {
                guard stack.ensureSpace(arguments + 4) else { throw .message("stack overflow") }
                // A handler may have rewritten this frame's slots (reported as such): stop there.
                guard stack.type(at: due) == .table else { break }
                stack.rawGet(due, i)
                stack.pushCopy(of: 1)
                for argument in 0 ..< arguments { stack.pushCopy(of: 3 + argument) }
                if stack.callReportingErrors(arguments: arguments + 1, results: 0) { succeeded += 1 }
            }
            stack.push(succeeded)
            return 1
        },
    ])
}

enum EventHandlerStore {
    static let registryKey = "bk.events"

    /// Argument 1: any table or userdata.
    static func checkObject(_ stack: LuaStack) throws(LuaRaise) {
        switch stack.type(at: 1) {
        case .table, .userdata: return
        default: throw .type(1, expected: "table")
        }
    }

    /// Pushes the handler list of the object at index 1 (nil when it has none and not `create`);
    /// returns its index.
    static func pushHandlers(_ stack: LuaStack, create: Bool) -> Int32 {
        if stack.pushRegistryTable(registryKey) {
            stack.pushNewTable(recordCount: 1)
            stack.push("k")
            stack.rawSet(-2, field: "__mode")
            stack.setMetatable(of: -2)
        }
        let store = stack.top
        stack.pushCopy(of: 1)
        if stack.rawGet(store) != .table && create {
            stack.pop()
            stack.pushNewTable()
            stack.pushCopy(of: 1)
            stack.pushCopy(of: -2)
            stack.rawSet(store)
        }
        stack.remove(at: store)
        return stack.top
    }

    /// Whether the entry at `entry` is registered for any event of the set at `events`.
    static func entryMatches(_ stack: LuaStack, entry: Int32, events: Int32) -> Bool {
        guard stack.type(at: entry) == .table, stack.rawGet(entry, field: "events") == .table else {
            stack.pop()
            return false
        }
        let entryEvents = stack.top
        defer { stack.top = entryEvents - 1 }
        stack.pushNil()
        while stack.next(events) {
            stack.pop()
            stack.pushCopy(of: -1)
            if stack.rawGet(entryEvents) != .nil { return true }
            stack.pop()
        }
        return false
    }
}
