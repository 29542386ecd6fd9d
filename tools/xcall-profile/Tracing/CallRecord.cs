namespace XCall.Profile.Tracing;

/// <summary>One <c>XCall/CallCompleted</c> event: one call seen from one side (see XCallEventSource).</summary>
internal readonly record struct CallRecord(
    string Contract,
    string Method,
    string Side,
    string Endpoint,
    long RequestBytes,
    long ReplyBytes,
    long MarshalNanoseconds,
    long TransportNanoseconds,
    long TargetNanoseconds,
    bool Failed);
