/// A delegate protocol: the methods a dynamic delegate answers, with their default answers.
///
/// `bk.protocol(name, methods)` makes one; protocols are also registered by name per state, so
/// `dynamicDelegateForProtocol(obj, "UIAlertViewDelegate")` works too.
public final class DelegateProtocol: LuaBridged {
    public enum Combine: String, Sendable { case and, or }

    public struct Method {
        public let required: Bool
        public let combine: Combine?
        /// The default answer (nil: none).
        let defaultValue: LuaRef?

        public init(required: Bool = false, combine: Combine? = nil, defaultValue: LuaRef? = nil) {
            self.required = required
            self.combine = combine
            self.defaultValue = defaultValue
        }
    }

    public let name: String
    public let methods: [String: Method]

    /// A protocol made in Swift; method names may be full selectors. `register(in:)` makes it known
    /// to Lua by name.
    public init(name: String, methods: [String: Method]) {
        self.name = name
        self.methods = Dictionary(methods.map { (SelectorName.methodName($0.key), $0.value) },
                                  uniquingKeysWith: { $1 })
    }

    /// Registers the protocol by name in the state of `stack` (replacing one of the same name).
    public func register(in stack: LuaStack) {
        DynamicDelegateStore.register(self, in: stack)
    }

    /// The protocol registered under `name` in the state of `stack`.
    public static func named(_ name: String, in stack: LuaStack) -> DelegateProtocol? {
        DynamicDelegateStore.registeredProtocol(named: name, in: stack)
    }

    /// The method named `name` (a method name or a full selector).
    func method(_ name: String) -> (name: String, method: Method)? {
        if let method = methods[name] { return (name, method) }
        let normalized = SelectorName.methodName(name)
        guard let method = methods[normalized] else { return nil }
        return (normalized, method)
    }

    public static let luaClass = LuaClass(
        name: "bk.Protocol",
        properties: [
            .readOnly("name") { (proto: DelegateProtocol, stack) in stack.push(proto.name) },
            // A fresh table: name -> {required = bool, returns = default, combine = "and"|"or"|nil}.
            .readOnly("methods") { (proto: DelegateProtocol, stack) in
                stack.pushNewTable(recordCount: Int32(proto.methods.count))
                for (name, method) in proto.methods {
                    stack.pushNewTable(recordCount: 3)
                    stack.push(method.required)
                    stack.rawSet(-2, field: "required")
                    if let combine = method.combine {
                        stack.push(combine.rawValue)
                        stack.rawSet(-2, field: "combine")
                    }
                    if let value = method.defaultValue {
                        value.push(on: stack)
                        stack.rawSet(-2, field: "returns")
                    }
                    stack.rawSet(-2, field: name)
                }
            },
        ],
        metamethods: [
            BKFunction("__tostring") { stack throws(LuaRaise) in
                let proto = try stack.checkObject(DelegateProtocol.self, at: 1)
                stack.push("bk.Protocol: " + proto.name)
                return 1
            },
        ])
}

extension DelegateProtocol {
    /// Reads the `methods` table of `bk.protocol(name, methods)` at `index` (raw walk):
    /// `name = {required =, returns =, combine =}`, `name = true`, or a list entry `"name"`.
    static func parse(name: String, methods index: Int32, in stack: LuaStack) throws(LuaRaise) -> DelegateProtocol {
        var methods: [String: Method] = [:]
        stack.pushNil()
        while stack.next(index) {
            let key: String
            if let string = stack.stringValue(-2) {
                key = string
            } else if stack.type(at: -2) == .number, let string = stack.stringValue(-1) {
                methods[SelectorName.methodName(string)] = Method(required: false, combine: nil, defaultValue: nil)
                stack.pop()
                continue
            } else {
                throw .argument(2, "method names must be strings")
            }
            let method: Method
            switch stack.type(at: -1) {
            case .boolean:
                method = Method(required: false, combine: nil, defaultValue: nil)
            case .table:
                let spec = stack.absolute(-1)
                try checkSpecFields(stack, spec, method: key)
                let required = stack.rawGet(spec, field: "required") != .nil && stack.toBool(-1)
                stack.pop()
                var combine: Combine?
                if stack.rawGet(spec, field: "combine") != .nil {
                    guard let word = stack.stringValue(-1), let value = Combine(rawValue: word) else {
                        throw .argument(2, "combine of '\(key)' must be \"and\" or \"or\"")
                    }
                    combine = value
                }
                stack.pop()
                var defaultValue: LuaRef?
                if stack.rawGet(spec, field: "returns") != .nil {
                    defaultValue = LuaRef(popping: stack)
                } else {
                    stack.pop()
                }
                method = Method(required: required, combine: combine, defaultValue: defaultValue)
            default:
                throw .argument(2, "method '\(key)' must be described by a table or true")
            }
            methods[SelectorName.methodName(key)] = method
            stack.pop()
        }
        return DelegateProtocol(name: name, methods: methods)
    }

    static let specFields = ["required", "returns", "combine"]

    /// A method's description may hold only `required`, `returns` and `combine` (a misspelled
    /// `requried` is an error, not an optional method).
    private static func checkSpecFields(_ stack: LuaStack, _ spec: Int32, method: String) throws(LuaRaise) {
        stack.pushNil()
        while stack.next(spec) {
            guard let field = stack.stringValue(-2), specFields.contains(field) else {
                let shown = stack.stringValue(-2).map { "'\($0)'" } ?? "(a \(stack.typeName(at: -2)))"
                throw .argument(2, "invalid option \(shown) in method '\(method)'; expected required = ..., "
                                + "returns = ..., combine = ...")
            }
            stack.pop()
        }
    }
}
