namespace XCall.Profile.Statistics;

/// <summary>What the report groups calls by.</summary>
internal readonly record struct CallKey(string Contract, string Method, string Side);
