extension MonitorHandle {
    /// How well the connection works, read from the user's own traffic (the
    /// probe); nil when unknown. An attribute of `online`, never a transition.
    public func reportQuality(_ quality: Quality?) {
        bus.reportQuality(quality, slot: slot)
    }
}
