namespace XCall.Parallel;

/// <summary>Whether new objects of a type may be created in the caller's process, their calls made directly.</summary>
public enum Agglomeration
{
    /// <summary>Default. Decided per creation from the grain measured so far (<see cref="GrainMeasurement"/>).</summary>
    Adaptive,

    /// <summary>Always in the caller's process: calls are direct, no placement.</summary>
    Always,

    /// <summary>Never: the placement decides, always.</summary>
    Never,
}
