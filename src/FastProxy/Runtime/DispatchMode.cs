namespace XCall;

/// <summary>Where a server runs the calls it receives (docs/remoting.md, "Dispatch").</summary>
public enum DispatchMode
{
    /// <summary>
    /// Default. Each call's arguments are copied out of transport memory, and the call runs on the thread that
    /// received it where the transport allows (shm and tcp: its receive thread, which reads the replies of the
    /// call's callbacks itself and hands the connection's receiving to a new thread when the call takes more than
    /// about a millisecond), else on the thread pool; either way a slow or blocked method does not stall the other
    /// calls of the connection for long (docs/remoting.md, "Dispatch"). At most
    /// <see cref="ConnectionOptions.MaxConcurrentCalls"/> calls (and <see cref="ConnectionOptions.MaxConcurrentArgumentBytes"/>
    /// of arguments) are queued for the pool or running there per connection; past that a call is refused with
    /// <see cref="XCallServerBusyException"/>, and a one-way call runs on the receiving thread, as with <see cref="Inline"/>.
    /// </summary>
    Concurrent,

    /// <summary>
    /// Calls run on the thread that receives them, reading arguments in place: the lowest latency, but a
    /// method that blocks holds up every later call of that connection, and a synchronous call back on that
    /// connection fails with <see cref="XCallException"/> (its reply could only be read by the thread that waits
    /// for it). For latency-critical services whose methods are short.
    /// </summary>
    Inline,
}
