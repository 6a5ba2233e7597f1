/**
 * Sleeps 250 ms at a time and prints a line after each sleep, so a test can time the JVM's timed waits in real
 * time from outside while the clock shim skews the clocks inside.
 */
public class Sleeper {
  public static void main(String[] args) throws InterruptedException {
    System.out.println("ready");
    for (int i = 0; i < 400; i++) {
      Thread.sleep(250);
      System.out.println("tick");
    }
  }
}
