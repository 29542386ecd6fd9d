namespace XCall.Parallel;

/// <summary>Whether new objects of a type may be created in the caller's process, their calls made directly.</summary>
public enum Agglomeration
{
    /// <summary>
    /// Default. Decided per creation from the grain measured so far (<see cref="GrainMeasurement"/>): the calls run on
    /// other ranks, or before enough of them were, the type's grain probe when it has one. Objects made before either
    /// was measured go where the placement puts them and stay there.
    /// </summary>
    Adaptive,

    /// <summary>Always in the caller's process: calls are direct, no placement.</summary>
    Always,

    /// <summary>Never: the placement decides, always.</summary>
    Never,
}
