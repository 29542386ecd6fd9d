using XCall.Profile.Tracing;

namespace XCall.Profile.Statistics;

/// <summary>Running totals of the calls of one <see cref="CallKey"/>.</summary>
internal sealed class CallStatistics
{
    private readonly DurationHistogram _marshal = new();
    private long _calls;
    private long _failed;
    private long _requestBytes;
    private long _replyBytes;
    private long _marshalNanoseconds;
    private long _transportNanoseconds;
    private long _targetNanoseconds;

    /// <summary>Adds one call.</summary>
    public void Add(in CallRecord call)
    {
        _calls++;
        _failed += call.Failed ? 1 : 0;
        _requestBytes += call.RequestBytes;
        _replyBytes += call.ReplyBytes;
        _marshalNanoseconds += call.MarshalNanoseconds;
        _transportNanoseconds += call.TransportNanoseconds;
        _targetNanoseconds += call.TargetNanoseconds;
        _marshal.Record(call.MarshalNanoseconds);
    }

    /// <summary>The report row of these calls.</summary>
    public CallSummary Summarize(CallKey key)
    {
        double calls = Math.Max(_calls, 1);
        return new CallSummary(
            key.Contract,
            key.Method,
            key.Side,
            _calls,
            _failed,
            MarshalMeanMicroseconds: _marshalNanoseconds / calls / 1000,
            MarshalP50Microseconds: _marshal.Percentile(0.50) / 1000,
            MarshalP99Microseconds: _marshal.Percentile(0.99) / 1000,
            RequestBytesPerCall: _requestBytes / calls,
            ReplyBytesPerCall: _replyBytes / calls,
            TransportMeanMicroseconds: _transportNanoseconds / calls / 1000,
            TargetMeanMicroseconds: _targetNanoseconds / calls / 1000,
            TotalCostMicroseconds: (_marshalNanoseconds + _transportNanoseconds + _targetNanoseconds) / 1000.0);
    }
}
