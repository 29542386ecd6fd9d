using System.Diagnostics.CodeAnalysis;

namespace XCall.Runtime.CompilerServices;

/// <summary>The failures of streams, thrown out of line.</summary>
internal static class StreamErrors
{
    [DoesNotReturn]
    public static void ThrowBatchTooLarge(int count, int asked) =>
        throw new XCallProtocolException($"A stream batch of {count} items answers a request for at most {asked}.");

    [DoesNotReturn]
    public static void ThrowBadRequest(int maxItems) =>
        throw new XCallProtocolException($"A stream request for {maxItems} items; a request asks for at least 1.");

    public static XCallException NullStream(string method) =>
        new($"The remote method {method} returned null instead of a stream.");
}
