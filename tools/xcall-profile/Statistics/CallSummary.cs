namespace XCall.Profile.Statistics;

/// <summary>
/// One report row: the calls of one method of one contract on one side. Times are in microseconds; the
/// total cost is the sum of marshalling, transport and target time over all the calls.
/// </summary>
internal sealed record CallSummary(
    string Contract,
    string Method,
    string Side,
    long Calls,
    long Failed,
    double MarshalMeanMicroseconds,
    double MarshalP50Microseconds,
    double MarshalP99Microseconds,
    double RequestBytesPerCall,
    double ReplyBytesPerCall,
    double TransportMeanMicroseconds,
    double TargetMeanMicroseconds,
    double TotalCostMicroseconds);
