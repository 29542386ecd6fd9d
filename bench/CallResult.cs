namespace XCall.Bench;

/// <summary>One cell of the call-cost table.</summary>
internal sealed record CallResult(string Signature, string Transport, double NsPerCall, long? AllocatedBytesPerCall)
{
    /// <summary>ns per call divided by the local interface call (<c>loc</c> / <c>direct</c>) of the same run.</summary>
    public double? RatioToLocal { get; init; }
}
