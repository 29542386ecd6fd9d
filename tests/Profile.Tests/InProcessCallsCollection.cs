namespace XCall.Profile.Tests;

/// <summary>
/// Tests that make XCall calls inside the test process run one after another: the Meter test cannot
/// tell its calls from another test's (its tags carry no endpoint).
/// </summary>
[CollectionDefinition(Name)]
public sealed class InProcessCallsCollection
{
    /// <summary>The collection's name.</summary>
    public const string Name = "In-process XCall calls";
}
