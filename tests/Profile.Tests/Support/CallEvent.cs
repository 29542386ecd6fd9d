using System.Diagnostics.Tracing;

namespace XCall.Profile.Tests.Support;

/// <summary>A <c>CallCompleted</c> event as an in-process listener saw it, fields read by name.</summary>
internal sealed record CallEvent(
    string Contract,
    string Method,
    string Side,
    string Endpoint,
    long RequestBytes,
    long ReplyBytes,
    long MarshalNanoseconds,
    long TransportNanoseconds,
    long TargetNanoseconds,
    bool Failed)
{
    /// <summary>Reads the fields of <paramref name="e"/>.</summary>
    public static CallEvent From(EventWrittenEventArgs e)
    {
        object? Field(string name) => e.Payload![e.PayloadNames!.IndexOf(name)];
        return new CallEvent(
            (string)Field("Contract")!,
            (string)Field("Method")!,
            (string)Field("Side")!,
            (string)Field("Endpoint")!,
            (long)Field("RequestBytes")!,
            (long)Field("ReplyBytes")!,
            (long)Field("MarshalNanoseconds")!,
            (long)Field("TransportNanoseconds")!,
            (long)Field("TargetNanoseconds")!,
            (bool)Field("Failed")!);
    }
}
