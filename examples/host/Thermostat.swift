import BlocksBridge

/// The host's model object, exposed to the script as the global `thermostat`.
///
/// `temperature` and `target` are observable from Swift and Lua, whoever sets them. Its delegate
/// (protocol `ThermostatDelegate`) is the object's dynamic delegate: the script implements the
/// methods as Lua blocks, and the Swift side calls them.
final class Thermostat: LuaObservable, LuaConvertible {
    let luaObservers = LuaObservers()
    let room: String
    @LuaObserved("temperature") var temperature = 0.0
    @LuaObserved("target") var target = 0.0
    /// The dynamic delegate (a Lua object); nil until the host attaches it.
    var delegate: LuaRef?
    private(set) var log: [String] = []

    init(room: String, temperature: Double, target: Double) {
        self.room = room
        self.temperature = temperature
        self.target = target
    }

    /// Moves one step towards the target, if the delegate agrees; returns the new temperature.
    func step(by amount: Double) throws -> Double {
        guard temperature != target else { return temperature }
        if let delegate, try !delegate.callMethod("thermostatShouldChange", self, as: Bool.self) {
            return temperature
        }
        temperature = temperature < target ? min(target, temperature + amount) : max(target, temperature - amount)
        if temperature == target {
            try delegate?.callMethod("thermostatDidReachTarget", self, temperature)
        }
        return temperature
    }

    func note(_ line: String) { log.append(line) }

    /// The delegate protocol, declared from Swift: method name to `{required, returns}`.
    static let delegateProtocol: [String: [String: Bool]] = [
        "thermostatShouldChange": ["returns": true],
        "thermostatDidReachTarget": ["required": false],
    ]

    static let luaClass = LuaClass(
        name: "Thermostat",  // so `bk.dynamicDelegate(thermostat)` uses `ThermostatDelegate`
        methods: LuaObservers.methods + [  // thermostat:bk_addObserverForKeyPath(...) too
            .method("step") { (thermostat: Thermostat, amount: Double?) in try thermostat.step(by: amount ?? 0.5) },
            .method("note") { (thermostat: Thermostat, line: String) in thermostat.note(line) },
        ],
        properties: [
            .readOnly("room", \Thermostat.room),
            .observable("temperature", \Thermostat.temperature),
            .observable("target", \Thermostat.target),
        ]
    )
}
