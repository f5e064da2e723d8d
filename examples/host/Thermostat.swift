import BlocksBridge

/// The host's model object, exposed to the script as the global `thermostat`.
final class Thermostat: LuaBridged, LuaConvertible {
    let room: String
    var temperature: Double
    var target: Double
    private(set) var log: [String] = []

    init(room: String, temperature: Double, target: Double) {
        self.room = room
        self.temperature = temperature
        self.target = target
    }

    /// Moves one step towards the target; returns the new temperature.
    func step(by amount: Double) -> Double {
        if temperature < target { temperature = min(target, temperature + amount) }
        if temperature > target { temperature = max(target, temperature - amount) }
        return temperature
    }

    func note(_ line: String) { log.append(line) }

    static let luaClass = LuaClass(
        name: "Thermostat",
        methods: [
            .method("step") { (thermostat: Thermostat, amount: Double?) in thermostat.step(by: amount ?? 0.5) },
            .method("note") { (thermostat: Thermostat, line: String) in thermostat.note(line) },
        ],
        properties: [
            .readOnly("room", \Thermostat.room),
            .readWrite("temperature", \Thermostat.temperature),
            .readWrite("target", \Thermostat.target),
        ]
    )
}
