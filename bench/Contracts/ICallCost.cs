namespace XCall.Bench;

/// <summary>The 2004 measurement's data case: one int field, nothing else.</summary>
public class Data
{
    public int p;
}

/// <summary>The inherited part of the contract: <c>virt</c> calls reach a virtual method through a base interface.</summary>
[Remotable]
public interface ICallBase
{
    void TestVirt(int value);
}

/// <summary>The six classic signatures of the call-cost benchmark (see README, "Reading the table").</summary>
[Remotable]
public interface ICallCost : ICallBase
{
    void Test(int value);

    void TestData(Data data);

    void TestString(string text);

    void TestBytes(byte[] data);
}
