import BlocksBridgeExport

/// The host's model object, exposed to the script as the global `thermostat`, and its class as
/// `Thermostat` (`Thermostat("attic", 15, 17)` makes one).
///
/// `@LuaExport` exports `room` (read-only: a `let`), `temperature` and `target` (observable from
/// Swift and Lua, whoever sets them), `step` and `note`. Its delegate (protocol
/// `ThermostatDelegate`) is the object's dynamic delegate: the script implements the methods as Lua
/// blocks, and the Swift side calls them.
@LuaExport
final class Thermostat: LuaExportable {
    let room: String
    @LuaObserved("temperature") var temperature = 0.0
    @LuaObserved("target") var target = 0.0
    /// The dynamic delegate (a Lua object); nil until the host attaches it.
    @LuaIgnore var delegate: LuaRef?
    @LuaIgnore private(set) var log: [String] = []

    init(room: String, temperature: Double, target: Double) {
        self.room = room
        self.temperature = temperature
        self.target = target
    }

    /// Moves one step (half a degree by default) towards the target, if the delegate agrees;
    /// returns the new temperature.
    func step(by amount: Double?) throws -> Double {
        let amount = amount ?? 0.5
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
    @LuaIgnore static let delegateProtocol: [String: [String: Bool]] = [
        "thermostatShouldChange": ["returns": true],
        "thermostatDidReachTarget": ["required": false],
    ]
}
