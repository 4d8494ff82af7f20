package example;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** An application with nothing of Baton's in its code: the starter configures the LockClient. */
@SpringBootApplication
public class UserApplication {
}
