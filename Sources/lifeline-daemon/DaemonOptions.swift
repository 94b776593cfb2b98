/// The command line of `lifeline daemon` that this program runs itself:
/// `lifeline daemon [--config FILE | --config=FILE]`, the arguments exactly as the
/// front binary received them. Anything else is nil, for the full CLI to answer.
struct DaemonOptions {
    var config: String?

    init?(_ arguments: [String]) {
        guard arguments.count >= 2, arguments[1] == "daemon" else { return nil }
        var rest = arguments.dropFirst(2)
        while let option = rest.popFirst() {
            if option == "--config", config == nil, let value = rest.popFirst(), !value.hasPrefix("-") {
                config = value
            } else if option.hasPrefix("--config="), config == nil {
                config = String(option.dropFirst("--config=".count))
            } else {
                return nil
            }
        }
    }
}
